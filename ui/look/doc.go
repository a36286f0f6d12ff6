// Package look is the look every view shares: Perch's theme and its
// colours, icons, the tooltip layer, the chat and search entries, page and
// field widths, the problem box (a failure's words with Details), the title
// row, and the words sizes, times and memory are written in. It draws only:
// no services, no state of its own beyond the widgets it makes.
package look
