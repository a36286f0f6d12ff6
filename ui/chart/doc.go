// Package chart is a line chart drawn on Fyne's own canvas (Teach's loss
// curves): series of points in, a rasterized picture with axes, legend
// and a hover readout out. It knows nothing of training.
package chart
