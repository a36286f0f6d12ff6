// Package dataset owns what a Teach run learns from: the chats' feedback
// (ratings, corrections, regenerations) turned into rows — SFT examples,
// preference pairs, rated answers — with the conversation before each
// answer as its prompt; a user's folder of mlx-lm JSONL read and checked
// line by line; the stable split into training and validation; the rows
// as the engine's trainset.Example (Examples: attachments named by hash, no
// file on the way); and Export, the same rows written as an mlx-lm
// dataset folder for the user to keep.
//
// Data flows one way: history.Store → FromFeedback/ReadFolder → Gather
// (split) → Examples (to the trainer) or Export (to a folder). It reads
// the history; it writes nothing but an export.
package dataset
