package graph

// AttrKind is the type of an attribute's value.
type AttrKind uint8

const (
	AttrInt AttrKind = iota + 1
	AttrFloat
	AttrString
	AttrInts
	AttrFloats
	AttrStrings
	AttrTensor
	// AttrGraph holds a nested graph (If branch, Loop or Scan body), kept
	// opaque: Graph is the serialized ONNX GraphProto.
	AttrGraph
	// AttrOther is any other attribute kind, kept as the serialized ONNX
	// AttributeProto in Graph so that export can write it back unchanged.
	AttrOther
)

// Attr is one node attribute.
type Attr struct {
	Name    string
	Kind    AttrKind
	Int     int64
	Float   float32
	String  string
	Ints    []int64
	Floats  []float32
	Strings []string
	Tensor  *Data
	Graph   []byte
}

// Attrs is a node's attributes in file order.
type Attrs []Attr

// Get returns the named attribute, or nil.
func (a Attrs) Get(name string) *Attr {
	for i := range a {
		if a[i].Name == name {
			return &a[i]
		}
	}
	return nil
}

// Int returns the named int attribute, or def when absent.
func (a Attrs) Int(name string, def int64) int64 {
	if x := a.Get(name); x != nil && x.Kind == AttrInt {
		return x.Int
	}
	return def
}

// Float returns the named float attribute, or def when absent.
func (a Attrs) Float(name string, def float32) float32 {
	if x := a.Get(name); x != nil && x.Kind == AttrFloat {
		return x.Float
	}
	return def
}

// Str returns the named string attribute, or def when absent.
func (a Attrs) Str(name string, def string) string {
	if x := a.Get(name); x != nil && x.Kind == AttrString {
		return x.String
	}
	return def
}

// Ints returns the named ints attribute, or nil when absent.
func (a Attrs) Ints(name string) []int64 {
	if x := a.Get(name); x != nil && x.Kind == AttrInts {
		return x.Ints
	}
	return nil
}

// Floats returns the named floats attribute, or nil when absent.
func (a Attrs) Floats(name string) []float32 {
	if x := a.Get(name); x != nil && x.Kind == AttrFloats {
		return x.Floats
	}
	return nil
}
