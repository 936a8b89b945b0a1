// Package onnxpb holds the Go types generated from the official onnx.proto
// (ONNX IR version 8, as shipped by Debian's libonnx-dev package).
//
// The generated file is committed so that building needs no protoc. To
// regenerate (needs protoc and protoc-gen-go v1.36.12):
//
//	go generate ./onnx/onnxpb
package onnxpb

//go:generate sh -c "cp /usr/include/onnx/onnx.proto . && protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/inlay-dev/inlay/onnx/onnxpb onnx.proto && rm onnx.proto"
