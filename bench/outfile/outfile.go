// Package outfile writes output files without ever replacing what the user
// did not mean to replace (atomically for a regular file, through for a FIFO
// or a device), and checks output paths before any work is done.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Write writes data to file without ever replacing what the user did not
// mean to replace:
//
//   - a regular file, or a name that does not exist yet, is replaced
//     atomically: a temporary file in the same directory, fsynced, then
//     renamed over it;
//   - a symbolic link is resolved and its target is written as above (a
//     link to a regular file: the target is replaced atomically and the
//     link stays a link; a link to a FIFO or a device: written through);
//   - a FIFO, a character or block device (a terminal, /dev/null) is written
//     through, never renamed over;
//   - a directory or a socket is refused.
//
// Errors name file, never the temporary file.
func Write(file string, data []byte, perm os.FileMode) error {
	return WriteContext(context.Background(), file, data, perm, nil)
}

// WriteContext is Write, but a FIFO or a device is written through within
// ctx: a FIFO without a reader is waited for (waiting, if set, is called
// once when the wait begins) until a reader opens it, ReaderWait has passed
// or ctx ends, and a reader that stops reading ends the write the same way.
// The error then says the data was not written, and why.
func WriteContext(ctx context.Context, file string, data []byte, perm os.FileMode, waiting func()) error {
	dest, st, err := resolveOutput(file)
	if err != nil {
		return err
	}
	if st != nil && !st.Mode().IsRegular() {
		f, err := openThrough(ctx, file, dest, waiting)
		if err != nil {
			return err
		}
		return writeThrough(ctx, file, f, data)
	}
	f, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", file, pathCause(err))
	}
	defer os.Remove(f.Name()) // no-op after a successful rename
	// The first error of the steps is the one reported; the file is closed
	// whatever happened, and renamed only if every step succeeded.
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dest)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, pathCause(err))
	}
	return nil
}

// Stdout is the output file name that means standard output.
const Stdout = "-"

// WriteOut writes data as a command's output: to stdout when file is
// Stdout, else as WriteContext, its wait for a FIFO's reader said on stderr
// (ReaderNote).
func WriteOut(ctx context.Context, file string, data []byte, perm os.FileMode, stdout, stderr io.Writer) error {
	if file == Stdout {
		_, err := stdout.Write(data)
		return err
	}
	return WriteContext(ctx, file, data, perm, ReaderNote(stderr, file))
}

// ReaderNote returns the waiting function of WriteContext and OpenThrough
// that says on stderr (nil: nowhere) that file, a FIFO, is waited for: what
// blocks, for how long, and how to give up.
func ReaderNote(stderr io.Writer, file string) func() {
	if stderr == nil {
		return nil
	}
	return func() {
		fmt.Fprintf(stderr, "tlsbench: waiting up to %s for a reader of the FIFO %s (an interrupt gives up)\n",
			ReaderWait, file)
	}
}

// Check says, before any work is done, whether Write(file) can
// succeed: the directory exists and is writable, and file is not a
// directory or a socket. "-" (standard output) is always fine.
func Check(file string) error {
	if file == Stdout {
		return nil
	}
	if file == "" {
		return errors.New("empty file name")
	}
	dest, st, err := resolveOutput(file)
	if err != nil {
		return err
	}
	if st == nil || st.Mode().IsRegular() { // written in its directory (a FIFO or a device: through)
		dir := filepath.Dir(dest)
		dst, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: directory %s does not exist", file, dir)
		case err != nil:
			return fmt.Errorf("%s: %w", file, pathCause(err))
		case !dst.IsDir():
			return fmt.Errorf("%s: %s is not a directory", file, dir)
		}
		if err := syscall.Access(dir, wOK); err != nil {
			return fmt.Errorf("%s: directory %s is not writable: %w", file, dir, err)
		}
	}
	if st != nil {
		if err := syscall.Access(dest, wOK); err != nil {
			return fmt.Errorf("%s: not writable: %w", file, err)
		}
	}
	return nil
}

// CheckDir says whether dir can hold output files: it exists (or its
// parent does, to create it in) and is writable.
func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(filepath.Clean(dir))
		pst, perr := os.Stat(parent)
		if perr != nil || !pst.IsDir() {
			return fmt.Errorf("%s: directory %s does not exist", dir, parent)
		}
		if err := syscall.Access(parent, wOK); err != nil {
			return fmt.Errorf("%s: directory %s is not writable: %w", dir, parent, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, pathCause(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := syscall.Access(dir, wOK); err != nil {
		return fmt.Errorf("%s: not writable: %w", dir, err)
	}
	return nil
}

// resolveOutput follows symbolic links from file and returns the path to
// write and what is there now (nil: nothing yet). A link to something other
// than a regular file (a FIFO, a device, /dev/stdout's /proc/self/fd/1) is
// written through the link itself. Directories, sockets and links that lead
// nowhere are refused.
func resolveOutput(file string) (string, os.FileInfo, error) {
	lst, err := os.Lstat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return file, nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("%s: %w", file, pathCause(err))
	}
	dest, st := file, lst
	if lst.Mode()&os.ModeSymlink != 0 {
		if st, err = os.Stat(file); err != nil {
			return "", nil, fmt.Errorf("%s: a symbolic link that leads nowhere: %w", file, pathCause(err))
		}
		if st.Mode().IsRegular() {
			if dest, err = filepath.EvalSymlinks(file); err != nil {
				return "", nil, fmt.Errorf("%s: %w", file, pathCause(err))
			}
		}
	}
	switch {
	case st.IsDir():
		return "", nil, fmt.Errorf("%s is a directory", file)
	case st.Mode()&os.ModeSocket != 0:
		return "", nil, fmt.Errorf("%s is a socket", file)
	}
	return dest, st, nil
}

// pathCause drops the operation and path of a file system error (they may
// name a temporary file).
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// wOK is access(2)'s W_OK.
const wOK = 2

// ReaderWait bounds how long a FIFO is waited for: for a reader to open
// it, and for the reader to take what is written.
const ReaderWait = time.Minute

// readerPoll is how often a FIFO without a reader is tried again.
const readerPoll = 50 * time.Millisecond

// OpenThrough opens file, a FIFO or a device (or a link to one), for
// writing without blocking the caller for good: a FIFO without a reader
// is waited for as WriteContext does. A regular file or a name that does
// not exist yet is refused (Write them).
func OpenThrough(ctx context.Context, file string, waiting func()) (*os.File, error) {
	dest, st, err := resolveOutput(file)
	if err != nil {
		return nil, err
	}
	if st == nil || st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a FIFO or a device", file)
	}
	return openThrough(ctx, file, dest, waiting)
}

// IsThrough says whether file names a FIFO or a device (or a link to one):
// what Write writes through rather than replaces.
func IsThrough(file string) bool {
	_, st, err := resolveOutput(file)
	return err == nil && st != nil && !st.Mode().IsRegular()
}

// openThrough opens dest without blocking (O_NONBLOCK: a FIFO without a
// reader fails with ENXIO at once), tried again until a reader comes,
// ReaderWait passes or ctx ends. The file is then pollable: its writes
// obey deadlines.
func openThrough(ctx context.Context, file, dest string, waiting func()) (*os.File, error) {
	deadline := time.Now().Add(ReaderWait)
	for first := true; ; first = false {
		f, err := os.OpenFile(dest, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, syscall.ENXIO):
			return nil, fmt.Errorf("%s: %w", file, pathCause(err))
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%s: interrupted while waiting for a reader of the FIFO: nothing written", file)
		case time.Now().After(deadline):
			return nil, fmt.Errorf("%s: no reader opened the FIFO within %s: nothing written", file, ReaderWait)
		}
		if first && waiting != nil {
			waiting()
		}
		select { // time.After's timer is collected once it fires or is unreachable (Go 1.23)
		case <-ctx.Done():
		case <-time.After(readerPoll):
		}
	}
}

// readerGrace is how long a reader already there may take the data when
// ctx has already ended (an interrupted run still writes its record).
const readerGrace = 2 * time.Second

// writeThrough writes data to f and closes it; a reader that does not
// take it within ReaderWait, or ctx's end during the write, stops it.
func writeThrough(ctx context.Context, file string, f *os.File, data []byte) error {
	wait, stop := ReaderWait, func() bool { return false }
	if ctx.Err() != nil {
		wait = readerGrace
	} else {
		stop = context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Now()) })
	}
	_ = f.SetWriteDeadline(time.Now().Add(wait)) // fails, harmlessly, where f is not pollable
	n, err := f.Write(data)
	interrupted := !stop() && wait == ReaderWait
	cerr := f.Close()
	switch {
	case err != nil && interrupted:
		return fmt.Errorf("%s: interrupted while the reader took the data: %d of %d bytes written", file, n, len(data))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%s: the reader did not take the data within %s: %d of %d bytes written", file, wait, n, len(data))
	case err != nil:
		return fmt.Errorf("%s: %w", file, pathCause(err))
	case cerr != nil:
		return fmt.Errorf("%s: %w", file, pathCause(cerr))
	}
	return nil
}
