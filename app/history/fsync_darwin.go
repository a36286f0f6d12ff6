package history

// On macOS fsync does not flush the drive's cache; F_FULLFSYNC does.
const fullfsyncPragmas = "&_pragma=fullfsync(1)&_pragma=checkpoint_fullfsync(1)"
