//! [`DavSink`]: a file written to an `http(s)://` URL the WebDAV way
//! (RFC 4918), as EOS, dCache and nginx's DAV module accept it.
//!
//! ```text
//!  append, write_at:  into a local spool file ($RNTUPLE_SPOOL_DIR, else $TMPDIR)
//!  finish:            PUT  http://host/dir/.name.PID-RAND.rntuple-tmp   (the whole file)
//!                     MOVE  ... Destination: http://host/dir/name, Overwrite: T
//!  drop:              the spool file is removed; nothing was sent
//! ```
//!
//! The file appears under its name in one step (the `MOVE`), complete. A
//! server that does not know `MOVE` (`405`, `501`) gets the file by a `PUT`
//! to its own name instead, which most servers also apply only once the
//! body has arrived whole. A writer killed before its `PUT` sends nothing;
//! one killed between `PUT` and `MOVE` leaves the temporary name, a
//! complete file under a name no one asked for. Costs: local disk for the
//! whole file, two requests. The `PUT` is retried whole after a network
//! failure or a 5xx answer; its timeout is the transport's plus a second
//! per MiB sent.

use std::io::{ErrorKind, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use reqwest::blocking::Body;
use reqwest::header::AUTHORIZATION;
use reqwest::{Method, StatusCode, Url};

use super::client::{status_error, url_error, Attempt, Transport};
use crate::storage::{LocalSink, WriteSink};
use rntuple_format::{Error, Result};

/// A file being written to a WebDAV server (see the [module documentation](self)).
#[derive(Debug)]
pub struct DavSink {
    transport: Transport,
    token: Option<String>,
    url: Url,
    temp: Url,
    spool: Option<LocalSink>,
    spool_path: PathBuf,
    finished: bool,
}

impl DavSink {
    /// Opens the local spool of `url`; nothing is sent before `finish`.
    pub fn create(url: &str) -> Result<Self> {
        let shown = crate::storage::redact::redact_url(url);
        let parsed = Url::parse(url).map_err(|e| Error::invalid(format!("{shown}: not a URL: {e}")))?;
        let name = parsed.path_segments().and_then(|mut s| s.next_back()).unwrap_or_default().to_string();
        if name.is_empty() || parsed.query().is_some() {
            return Err(Error::invalid(format!("{shown}: writing needs a URL naming a file, without a query")));
        }
        let unique = format!(
            "{}-{:08x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos())
        );
        let mut temp = parsed.clone();
        temp.path_segments_mut()
            .map_err(|()| Error::invalid(format!("{shown}: not a URL with a path")))?
            .pop()
            .push(&format!(".{name}.{unique}.rntuple-tmp"));
        let dir = std::env::var_os("RNTUPLE_SPOOL_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
        let spool_path = dir.join(format!("rntuple-spool-{unique}.root"));
        let spool = LocalSink::create(&spool_path).map_err(|e| e.within(&format!("the local spool of {shown}")))?;
        Ok(DavSink {
            transport: Transport::new(url)?,
            token: super::token::for_url(url)?,
            url: parsed,
            temp,
            spool: Some(spool),
            spool_path,
            finished: false,
        })
    }

    fn spool(&mut self) -> std::io::Result<&mut LocalSink> {
        self.spool.as_mut().ok_or_else(|| std::io::Error::other("the upload is finished"))
    }

    fn request(&self, method: Method, url: &Url) -> reqwest::blocking::RequestBuilder {
        let request = self.transport.client.request(method, url.clone());
        match &self.token {
            Some(t) => request.header(AUTHORIZATION, format!("Bearer {t}")),
            None => request,
        }
    }

    /// `PUT`s the spooled file to `to`.
    fn put(&self, to: &Url, len: u64) -> Result<()> {
        let what = format!("PUT of {len} bytes to {to}");
        self.transport.with_retry(&what, || {
            let mut file = std::fs::File::open(&self.spool_path)
                .map_err(|e| Attempt::Fatal(Error::io(format!("the local spool {}", self.spool_path.display()), e)))?;
            file.seek(SeekFrom::Start(0)).map_err(|e| Attempt::Transient(e.to_string()))?;
            // The whole file is one request: its timeout grows by a second
            // per MiB (a stall still ends it; a large file at 1 MiB/s does not).
            let timeout = self.transport.timeout + std::time::Duration::from_secs(len >> 20);
            let request = self.request(Method::PUT, to).timeout(timeout).body(Body::sized(file, len));
            self.transport.counters.single(len);
            let response = self.transport.send(request, &what)?;
            match response.status() {
                s if s.is_success() => Ok(()),
                s => Err(status_error(&self.transport.url, s, &what).into()),
            }
        })
    }

    /// `MOVE`s the temporary file to the URL; `false` when the server does
    /// not know `MOVE`.
    fn move_into_place(&self) -> Result<bool> {
        let what = "MOVE of the temporary file to its name";
        let method = Method::from_bytes(b"MOVE").map_err(|e| Error::invalid(e.to_string()))?;
        self.transport.with_retry(what, || {
            let request = self
                .request(method.clone(), &self.temp)
                .header("Destination", self.url.as_str())
                .header("Overwrite", "T");
            let response = self.transport.send(request, what)?;
            match response.status() {
                s if s.is_success() => Ok(true),
                StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => Ok(false),
                s => Err(status_error(&self.transport.url, s, what).into()),
            }
        })
    }

    fn delete_temp(&self) {
        let _ = self.request(Method::DELETE, &self.temp).send();
    }

    fn publish(&mut self) -> Result<()> {
        let len = match self.spool.take() {
            Some(mut spool) => {
                spool.sync().map_err(|e| Error::io(format!("the local spool {}", self.spool_path.display()), e))?;
                spool.len()
            }
            None => return Err(url_error(&self.transport.url, ErrorKind::Other, "the upload is finished")),
        };
        self.put(&self.temp.clone(), len)?;
        if !self.move_into_place()? {
            self.delete_temp();
            self.put(&self.url.clone(), len)?;
        }
        Ok(())
    }
}

impl WriteSink for DavSink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.spool()?.append(bytes)
    }

    fn append_zeros(&mut self, len: u64) -> std::io::Result<()> {
        self.spool()?.append_zeros(len)
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.spool()?.write_at(offset, bytes)
    }

    fn len(&self) -> u64 {
        self.spool.as_ref().map_or(0, WriteSink::len)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.spool.as_mut() {
            Some(s) => s.flush(),
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if self.finished {
            return Ok(());
        }
        let result = self.publish();
        let _ = std::fs::remove_file(&self.spool_path);
        if result.is_err() {
            self.delete_temp();
        }
        result.map_err(|e| match e {
            Error::Io { context, source } => std::io::Error::new(source.kind(), format!("{context}: {source}")),
            e => std::io::Error::other(e.to_string()),
        })?;
        self.finished = true;
        Ok(())
    }

    fn describe(&self) -> String {
        self.transport.url.clone()
    }
}

impl Drop for DavSink {
    /// Nothing was sent (or only the temporary name, removed again).
    fn drop(&mut self) {
        self.spool = None;
        if Path::new(&self.spool_path).exists() {
            let _ = std::fs::remove_file(&self.spool_path);
        }
    }
}
