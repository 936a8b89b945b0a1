package infer_test

import (
	"fmt"

	"github.com/inlay-dev/inlay/graph"
	"github.com/inlay-dev/inlay/infer"
)

// A 3×3 convolution with stride 2 and padding 1 on a 224×224 RGB image.
func ExampleRun() {
	m := &graph.Model{
		Opsets: []graph.OpsetImport{{Version: 17}},
		Tensors: map[string]*graph.Tensor{
			"image": {Name: "image", DType: graph.Float32, Shape: graph.Shape{1, 3, 224, 224}, Kind: graph.Input},
			"w": {Name: "w", DType: graph.Float32, Shape: graph.Shape{32, 3, 3, 3}, Kind: graph.Initializer,
				Data: &graph.Data{DType: graph.Float32, Dims: graph.Shape{32, 3, 3, 3}}}, // values do not matter
		},
		Nodes: []*graph.Node{{Name: "conv", Op: "Conv", Inputs: []string{"image", "w"}, Outputs: []string{"features"},
			Attrs: graph.Attrs{
				{Name: "strides", Kind: graph.AttrInts, Ints: []int64{2, 2}},
				{Name: "pads", Kind: graph.AttrInts, Ints: []int64{1, 1, 1, 1}},
			}}},
		Inputs:  []string{"image"},
		Outputs: []string{"features"},
	}
	if err := infer.Run(m, infer.Options{}); err != nil {
		fmt.Println(err)
		return
	}
	w := m.Nodes[0].Work
	fmt.Println(m.Tensors["features"].Shape, w.MACs, w.Params)
	// Output: 1x32x112x112 10838016 864
}
