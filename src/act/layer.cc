// Placeholder so the layer library is never empty; removed when the layer has code.
