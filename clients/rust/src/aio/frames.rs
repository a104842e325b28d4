//! Reading frames from the sidecar's stdout, asynchronously (the two framings of §2.1).

use crate::framing::content_length;
use crate::Framing;
use std::io;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

/// Reads the next message body; `Ok(None)` at a clean end of the stream.
pub(crate) async fn read_frame<R: AsyncBufRead + Unpin>(r: &mut R, framing: Framing, max: usize) -> io::Result<Option<Vec<u8>>> {
    let trim = |line: &mut Vec<u8>| {
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
    };
    if framing != Framing::Lsp {
        loop {
            let mut line = Vec::new();
            let n = (&mut *r).take(max as u64 + 2).read_until(b'\n', &mut line).await?;
            if n == 0 {
                return Ok(None);
            }
            if line.last() != Some(&b'\n') {
                if line.len() > max {
                    return Err(invalid("a line from the sidecar is longer than the maximum"));
                }
                return Ok(None);
            }
            trim(&mut line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Some(line));
            }
        }
    }
    let mut length = None;
    let mut header_bytes = 0usize;
    loop {
        let mut line = Vec::new();
        let n = (&mut *r).take(8192).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return if length.is_none() && header_bytes == 0 {
                Ok(None)
            } else {
                Err(invalid("the sidecar's output ended inside an LSP header"))
            };
        }
        header_bytes += n;
        if header_bytes > 8192 {
            return Err(invalid("an LSP header block longer than 8 KiB"));
        }
        trim(&mut line);
        if line.is_empty() {
            match length {
                Some(len) if len > max => return Err(invalid("a frame from the sidecar is larger than the maximum")),
                Some(len) => {
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).await?;
                    return Ok(Some(body));
                }
                None => {
                    header_bytes = 0;
                    continue;
                }
            }
        }
        if let Some(len) = content_length(&line)? {
            length = Some(len);
        }
    }
}
