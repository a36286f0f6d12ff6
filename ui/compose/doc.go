// Package compose is the message input the chat and the quick-ask popup
// share: the entry, attachment chips, the attach dialog, paste and drop,
// and the microphone panel. Every way in ends in ui.Chat's AttachFile or
// AttachData; what it holds goes out through OnSend when the user sends.
package compose
