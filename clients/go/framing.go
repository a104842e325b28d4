package sidecar

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The two framings of protocol §2.1 (the generated Framing type): FramingNDJSON, one JSON
// message per line, and FramingLSP, "Content-Length: N\r\n\r\n" and N bytes.

// maxHeaderBytes bounds an LSP header block, as the server bounds its own (8 KiB).
const maxHeaderBytes = 8 << 10

// frame returns body framed for the wire.
func frame(f Framing, body []byte) []byte {
	if f == FramingLSP {
		out := make([]byte, 0, len(body)+32)
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, int64(len(body)), 10)
		out = append(out, "\r\n\r\n"...)
		return append(out, body...)
	}
	out := make([]byte, 0, len(body)+1)
	out = append(out, body...)
	return append(out, '\n')
}

// frameReader reads message bodies in one framing.
type frameReader struct {
	r       *bufio.Reader
	framing Framing
	max     int
}

func newFrameReader(r io.Reader, f Framing, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), framing: f, max: max}
}

// errTruncated: the stream ended inside a message.
var errTruncated = errors.New("the output ended inside a message")

// next returns the next message body; io.EOF at a clean end between messages.
func (fr *frameReader) next() ([]byte, error) {
	if fr.framing == FramingLSP {
		return fr.nextLSP()
	}
	for {
		line, err := fr.readLine(fr.max + 2)
		if err == io.EOF && len(line) > 0 {
			return nil, errTruncated // a final line without \n is never a message
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines are ignored
		}
		return line, nil
	}
}

// readLine reads up to and including '\n', at most limit bytes.
func (fr *frameReader) readLine(limit int) ([]byte, error) {
	var acc []byte
	for {
		part, err := fr.r.ReadSlice('\n')
		if len(acc)+len(part) > limit {
			return nil, fmt.Errorf("a message longer than %d bytes", limit)
		}
		if err == bufio.ErrBufferFull {
			acc = append(acc, part...)
			continue
		}
		if acc == nil {
			acc = append([]byte(nil), part...)
		} else {
			acc = append(acc, part...)
		}
		return acc, err
	}
}

func (fr *frameReader) nextLSP() ([]byte, error) {
	length := -1
	headerBytes := 0
	for {
		line, err := fr.readLine(maxHeaderBytes)
		if err == io.EOF && len(line) == 0 && length < 0 && headerBytes == 0 {
			return nil, io.EOF
		}
		if err == io.EOF {
			return nil, errTruncated
		}
		if err != nil {
			return nil, err
		}
		headerBytes += len(line)
		if headerBytes > maxHeaderBytes {
			return nil, fmt.Errorf("an LSP header block longer than %d bytes", maxHeaderBytes)
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			if length < 0 {
				if headerBytes == len(line) {
					headerBytes = 0 // a stray blank line between frames
					continue
				}
				return nil, errors.New("an LSP header block without Content-Length")
			}
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("a malformed LSP header line")
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("an invalid Content-Length")
			}
			length = n
		}
	}
	if length > fr.max {
		return nil, fmt.Errorf("a message of %d bytes, more than the maximum of %d", length, fr.max)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(fr.r, body); err != nil {
		return nil, errTruncated
	}
	return body, nil
}
