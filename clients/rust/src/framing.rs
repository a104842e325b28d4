//! The two framings of protocol §2.1: NDJSON (one JSON message per line) and LSP
//! (`Content-Length: N\r\n\r\n` + N bytes). [`Framing`](crate::Framing) is generated from the
//! schema (`capabilities.framings`).

use crate::Framing;
use std::io::{self, BufRead, Read};

/// The default largest frame the client accepts from the server (1 GiB).
pub const DEFAULT_MAX_FRAME_BYTES: usize = 1 << 30;

/// One message body framed for the wire.
pub(crate) fn encode(framing: Framing, body: Vec<u8>) -> Vec<u8> {
    match framing {
        Framing::Lsp => {
            let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            out.extend_from_slice(&body);
            out
        }
        // serde_json never writes a raw newline in compact JSON (they are escaped as \n).
        _ => {
            let mut body = body;
            body.push(b'\n');
            body
        }
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// The `Content-Length` of one LSP header line (`None` for other headers).
pub(crate) fn content_length(line: &[u8]) -> io::Result<Option<usize>> {
    let line = std::str::from_utf8(line).map_err(|_| invalid("an LSP header line is not UTF-8".into()))?;
    let (name, value) =
        line.split_once(':').ok_or_else(|| invalid(format!("malformed LSP header line: {:?}", truncate(line))))?;
    if name.trim().eq_ignore_ascii_case("content-length") {
        value
            .trim()
            .parse::<usize>()
            .map(Some)
            .map_err(|_| invalid(format!("malformed Content-Length: {:?}", truncate(value))))
    } else {
        Ok(None)
    }
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(80) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn trim_line(line: &mut Vec<u8>) {
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
}

/// Reads the next message body; `Ok(None)` at a clean end of the stream.
pub(crate) fn read_frame<R: BufRead>(r: &mut R, framing: Framing, max: usize) -> io::Result<Option<Vec<u8>>> {
    match framing {
        Framing::Lsp => read_lsp(r, max),
        _ => read_ndjson(r, max),
    }
}

fn read_ndjson<R: BufRead>(r: &mut R, max: usize) -> io::Result<Option<Vec<u8>>> {
    loop {
        let mut line = Vec::new();
        let n = r.by_ref().take(max as u64 + 2).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        if line.last() != Some(&b'\n') {
            if line.len() > max {
                return Err(invalid(format!("a line from the sidecar is longer than {max} bytes")));
            }
            return Ok(None); // a final line without \n is never a message (§2.1)
        }
        trim_line(&mut line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Some(line));
        }
    }
}

fn read_lsp<R: BufRead>(r: &mut R, max: usize) -> io::Result<Option<Vec<u8>>> {
    let mut length: Option<usize> = None;
    let mut header_bytes = 0usize;
    loop {
        let mut line = Vec::new();
        let n = r.by_ref().take(8192).read_until(b'\n', &mut line)?;
        if n == 0 {
            return if length.is_none() && header_bytes == 0 {
                Ok(None)
            } else {
                Err(invalid("the sidecar's output ended inside an LSP header".into()))
            };
        }
        header_bytes += n;
        if header_bytes > 8192 {
            return Err(invalid("an LSP header block longer than 8 KiB".into()));
        }
        trim_line(&mut line);
        if line.is_empty() {
            match length {
                Some(len) => {
                    if len > max {
                        return Err(invalid(format!("a frame from the sidecar is larger than {max} bytes")));
                    }
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).map_err(|e| {
                        if e.kind() == io::ErrorKind::UnexpectedEof {
                            invalid("the sidecar's output ended inside an LSP body".into())
                        } else {
                            e
                        }
                    })?;
                    return Ok(Some(body));
                }
                None => {
                    header_bytes = 0; // stray blank line between frames
                    continue;
                }
            }
        }
        if let Some(len) = content_length(&line)? {
            length = Some(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn frames(framing: Framing, input: &[u8]) -> io::Result<Vec<Vec<u8>>> {
        let mut r = Cursor::new(input.to_vec());
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut r, framing, 1 << 20)? {
            out.push(f);
        }
        Ok(out)
    }

    #[test]
    fn ndjson_round_trip_blank_lines_and_crlf() {
        let mut wire = encode(Framing::Ndjson, b"{\"a\":1}".to_vec());
        wire.extend_from_slice(b"\n\r\n{\"b\":2}\r\n{\"partial\":");
        assert_eq!(frames(Framing::Ndjson, &wire).unwrap(), [b"{\"a\":1}".to_vec(), b"{\"b\":2}".to_vec()]);
    }

    #[test]
    fn lsp_round_trip_other_headers_and_case() {
        let mut wire = encode(Framing::Lsp, "{\"é\":1}".as_bytes().to_vec());
        assert!(wire.starts_with(b"Content-Length: 8\r\n\r\n"), "length in bytes, not chars");
        wire.extend_from_slice(b"\r\ncontent-length: 2\r\nContent-Type: application/json\r\n\r\n{}");
        assert_eq!(frames(Framing::Lsp, &wire).unwrap(), ["{\"é\":1}".as_bytes().to_vec(), b"{}".to_vec()]);
    }

    #[test]
    fn lsp_faults_are_errors() {
        assert!(frames(Framing::Lsp, b"Content-Length: x\r\n\r\n").is_err());
        assert!(frames(Framing::Lsp, b"Content-Length: 10\r\n\r\n{}").is_err());
        assert!(frames(Framing::Lsp, b"Content-Length: 2\r\n").is_err());
        let mut r = Cursor::new(b"Content-Length: 100\r\n\r\n".to_vec());
        assert!(read_frame(&mut r, Framing::Lsp, 10).is_err(), "over the maximum");
    }
}
