package infer

// buildRules assembles the operator table. Keys are operator names of the
// default domain, or "domain:Op" for others (see ruleKey).
func buildRules() map[string]rule {
	t := map[string]rule{}
	for op, s := range unaryOps() {
		t[op] = unaryRule(s)
	}
	for op, s := range binaryOps() {
		t[op] = binaryRule(op, s)
	}
	for _, op := range []string{"Max", "Min", "Sum", "Mean"} {
		t[op] = variadicRule(op)
	}
	t["Where"] = whereRule()
	t["Clip"] = clipRule()
	t["Cast"] = castRule()
	t["CastLike"] = castRule()
	t["Dropout"] = dropoutRule()

	t["Shape"] = shapeRule()
	t["Size"] = sizeRule()
	t["Reshape"] = reshapeRule()
	t["Flatten"] = flattenRule()
	t["Squeeze"] = squeezeRule()
	t["Unsqueeze"] = unsqueezeRule()
	t["Concat"] = concatRule()
	t["Split"] = splitRule()
	t["Slice"] = sliceRule()
	t["Gather"] = gatherRule()
	t["GatherElements"] = withEval(gatherElementsRule(), gatherElementsEval)
	t["GatherND"] = gatherNDRule()
	t["ScatterND"] = withEval(scatterNDRule(), scatterNDEval)
	t["ScatterElements"] = withEval(scatterElementsRule(), scatterElementsEval)
	t["Scatter"] = withEval(scatterElementsRule(), scatterElementsEval)
	t["Transpose"] = transposeRule()
	t["Expand"] = expandRule()
	t["Tile"] = tileRule()
	t["ConstantOfShape"] = constantOfShapeRule()
	t["Range"] = rangeRule()
	t["Pad"] = withEval(padRule(), padEval)
	t["DepthToSpace"] = depthToSpaceRule(true)
	t["SpaceToDepth"] = depthToSpaceRule(false)
	t["OneHot"] = oneHotRule()
	t["NonZero"] = nonZeroRule()
	t["Compress"] = compressRule()
	t["EyeLike"] = eyeLikeRule()
	t["Unique"] = uniqueRule()
	t["CenterCropPad"] = centerCropPadRule()
	t["Resize"] = resizeRule()
	t["Upsample"] = resizeRule()
	t["ReverseSequence"] = sameAsInput0Rule(0)
	t["Trilu"] = withEval(triluRule(), triluEval)
	t["CumSum"] = withEval(cumSumRule(), cumSumEval)

	t["Conv"] = convRule()
	t["ConvInteger"] = convRule()
	t["QLinearConv"] = qlinearConvRule()
	t["ConvTranspose"] = convTransposeRule()
	for _, op := range []string{"MaxPool", "AveragePool", "LpPool"} {
		t[op] = poolRule()
	}
	for _, op := range []string{"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"} {
		t[op] = globalPoolRule()
	}
	t["MaxRoiPool"] = maxRoiPoolRule()
	t["MaxUnpool"] = maxUnpoolRule()
	t["BatchNormalization"] = normRule(2)
	t["InstanceNormalization"] = normRule(6)
	t["GroupNormalization"] = normRule(6)
	t["MeanVarianceNormalization"] = normRule(6)
	t["LRN"] = normRule(6)
	t["LpNormalization"] = lpNormRule()
	t["LayerNormalization"] = layerNormRule()
	t["MatMul"] = matmulRule()
	t["MatMulInteger"] = matmulRule()
	t["QLinearMatMul"] = matmulRule()
	t["Gemm"] = gemmRule()
	t["Einsum"] = einsumRule()
	for _, op := range []string{"Softmax", "LogSoftmax", "Hardmax"} {
		t[op] = softmaxRule()
	}
	for op, f := range map[string]int64{
		"ReduceMean": 1, "ReduceMax": 1, "ReduceMin": 1, "ReduceProd": 1,
		"ReduceL1": 2, "ReduceL2": 2, "ReduceLogSum": 2, "ReduceLogSumExp": 3, "ReduceSumSquare": 2,
	} {
		t[op] = reduceRule(18, f)
	}
	t["ReduceSum"] = reduceRule(13, 1)
	t["ArgMax"] = withEval(argRule(), argEval)
	t["ArgMin"] = withEval(argRule(), argEval)
	t["TopK"] = topKRule()
	t["LSTM"] = rnnRule(4)
	t["GRU"] = rnnRule(3)
	t["RNN"] = rnnRule(1)
	t["QuantizeLinear"] = quantizeRule(false)
	t["DequantizeLinear"] = dequantizeRule(false)
	t["DynamicQuantizeLinear"] = dynamicQuantizeRule()
	t["DFT"] = dftRule()
	t["STFT"] = stftRule()
	t["GridSample"] = gridSampleRule()
	t["RoiAlign"] = roiAlignRule()
	t["NonMaxSuppression"] = nmsRule()
	t["HannWindow"] = windowFuncRule()
	t["HammingWindow"] = windowFuncRule()
	t["BlackmanWindow"] = windowFuncRule()
	t["MelWeightMatrix"] = melWeightRule()
	t["AffineGrid"] = affineGridRule()
	t["RandomNormal"] = randomRule(false)
	t["RandomUniform"] = randomRule(false)
	t["RandomNormalLike"] = randomRule(true)
	t["RandomUniformLike"] = randomRule(true)
	t["Bernoulli"] = bernoulliRule()
	t["Multinomial"] = multinomialRule()
	t["Det"] = detRule()
	t["Col2Im"] = col2ImRule()
	t["SoftmaxCrossEntropyLoss"] = lossRule()
	t["NegativeLogLikelihoodLoss"] = lossRule()
	t["Attention"] = attentionRule()
	t["RMSNormalization"] = rmsNormRule()
	t["RotaryEmbedding"] = sameAsInput0Rule(3)
	t["TensorScatter"] = sameAsInput0Rule(1)
	// ONNX Runtime registers SimplifiedLayerNormalization in the default domain.
	t["SimplifiedLayerNormalization"] = rmsNormRule()

	// com.microsoft contrib operators that ONNX Runtime's optimisers and
	// quantisation tools write.
	const ms = "com.microsoft:"
	t[ms+"QLinearAdd"] = qlinearBinaryRule()
	t[ms+"QLinearMul"] = qlinearBinaryRule()
	t[ms+"QLinearConv"] = qlinearConvRule()
	t[ms+"QuantizeLinear"] = quantizeRule(true)
	t[ms+"DequantizeLinear"] = dequantizeRule(true)
	t[ms+"Gelu"] = unaryRule(unaryOps()["Gelu"])
	t[ms+"FastGelu"] = unaryRule(unarySpec{flops: 8})
	t[ms+"QuickGelu"] = unaryRule(unarySpec{flops: 5})
	t[ms+"BiasGelu"] = binaryRule("BiasGelu", binarySpec{flops: 9})
	t[ms+"BiasAdd"] = binaryRule("BiasAdd", binarySpec{flops: 1})
	t[ms+"LayerNormalization"] = layerNormRule()
	t[ms+"SkipLayerNormalization"] = skipLayerNormRule()
	t[ms+"FusedConv"] = convRule()
	t[ms+"Attention"] = msAttentionRule()
	t[ms+"FusedMatMul"] = fusedMatMulRule()
	t[ms+"MatMulNBits"] = matMulNBitsRule()
	t[ms+"QGemm"] = qgemmRule()
	t[ms+"QLinearSigmoid"] = qlinearUnaryRule(4)
	t[ms+"QLinearLeakyRelu"] = qlinearUnaryRule(2)
	t[ms+"QLinearSoftmax"] = qlinearUnaryRule(5)
	t[ms+"QLinearGlobalAveragePool"] = qlinearGlobalPoolRule()
	t[ms+"QLinearAveragePool"] = qlinearAveragePoolRule()
	t[ms+"DynamicQuantizeMatMul"] = dynamicQuantizeMatMulRule()
	t[ms+"MatMulIntegerToFloat"] = matMulIntegerToFloatRule()
	t[ms+"QAttention"] = qAttentionRule()
	t[ms+"QLinearConcat"] = qlinearConcatRule()
	t[ms+"MultiHeadAttention"] = msMultiHeadAttentionRule()
	t[ms+"RotaryEmbedding"] = sameAsInput0Rule(3)
	t[ms+"SkipSimplifiedLayerNormalization"] = skipSimplifiedLayerNormRule()
	t[ms+"SimplifiedLayerNormalization"] = rmsNormRule()
	return t
}

// withEval gives a rule an evaluator for constant folding.
func withEval(r rule, e func(c *ctx, in []*value) ([]*value, error)) rule {
	r.eval = e
	return r
}
