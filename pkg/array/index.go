package array

import (
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Count is the number of elements of a shape (the product of its
// dimensions), false on overflow or a negative dimension.
func Count(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = int64(lo)
	}
	return n, true
}

// NBytes is Count × item size, false on overflow.
func NBytes(shape []int64, item int64) (int64, bool) {
	c, ok := Count(shape)
	if !ok || item < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(c), uint64(item))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// Index is the index of the i-th element of an array's data laid out in
// order 'C' (the last index varies fastest) or 'F' (the first does).
func Index(i int64, shape []int64, order byte) []int64 {
	out := make([]int64, len(shape))
	if order == 'F' {
		for d := 0; d < len(shape); d++ {
			if shape[d] > 0 {
				out[d], i = i%shape[d], i/shape[d]
			}
		}
		return out
	}
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			out[d], i = i%shape[d], i/shape[d]
		}
	}
	return out
}

// TensorIndex is the index in a strided tensor (shape, stride and storage
// offset, in elements) of storage element k, or false when the tensor does
// not see that element (it lies outside its view, or between its strides).
func TensorIndex(k int64, shape, stride []int64, offset int64) ([]int64, bool) {
	if len(shape) != len(stride) || k < offset {
		return nil, false
	}
	dims := make([]int, len(shape))
	for i := range dims {
		dims[i] = i
		if stride[i] < 0 || shape[i] < 0 {
			return nil, false
		}
	}
	sort.SliceStable(dims, func(a, b int) bool { return stride[dims[a]] > stride[dims[b]] })
	rem := k - offset
	out := make([]int64, len(shape))
	for _, d := range dims {
		if shape[d] <= 1 || stride[d] == 0 {
			continue
		}
		x := rem / stride[d]
		if x >= shape[d] {
			return nil, false
		}
		out[d], rem = x, rem-x*stride[d]
	}
	return out, rem == 0
}

// ShapeText is a shape as Python prints a tuple: (2, 3), (4,), ().
func ShapeText(shape []int64) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	if len(shape) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
