//! Output files that are either whole or absent: a report, a capture or a table is written
//! to a temporary file beside its path and renamed over it when complete, so that a full
//! disk, an error or a kill never leaves a truncated file under the name a user asked for.
//! The temporary file is made when the output is opened (before a long run, so that a
//! missing directory or a read-only one is found at once), and removed if the output is
//! dropped without [`OutputFile::commit`]. Errors name the path, and a full disk says so in
//! words.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written in place of `path`.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl OutputFile {
    /// Open `path` for writing: a temporary file beside it (its directory must exist).
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let name = path
            .file_name()
            .ok_or_else(|| named(path, io::Error::other("not a file name")))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.tmp", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        if path.is_dir() {
            return Err(named(
                path,
                io::Error::new(io::ErrorKind::IsADirectory, "is a directory"),
            ));
        }
        let file = File::create(&tmp).map_err(|e| named(path, e))?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(BufWriter::new(file)),
        })
    }

    /// The path the file will have.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Everything written is flushed and the file takes its name.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self
            .out
            .take()
            .expect("an uncommitted output has its writer");
        let file = out
            .into_inner()
            .map_err(|e| named(&self.path, e.into_error()))?;
        file.sync_data().map_err(|e| named(&self.path, e))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| named(&self.path, e))
    }

    fn writer(&mut self) -> &mut BufWriter<File> {
        self.out
            .as_mut()
            .expect("an uncommitted output has its writer")
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let path = self.path.clone();
        self.writer().write(buf).map_err(|e| named(&path, e))
    }

    fn flush(&mut self) -> io::Result<()> {
        let path = self.path.clone();
        self.writer().flush().map_err(|e| named(&path, e))
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` whole (through a temporary file).
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = OutputFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// `e` with `path` in front of it, a full disk said in words. An error that already names
/// the path is returned as it is.
pub fn named(path: &Path, e: io::Error) -> io::Error {
    let shown = path.display().to_string();
    let text = e.to_string();
    if text.starts_with(&shown) {
        return e;
    }
    let why = match e.kind() {
        io::ErrorKind::StorageFull => "no space left on device".to_string(),
        io::ErrorKind::QuotaExceeded => "disk quota exceeded".to_string(),
        _ => text,
    };
    io::Error::new(e.kind(), format!("{shown}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lossless-output-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_file_appears_whole_or_not_at_all() {
        let d = dir("whole");
        let p = d.join("r.json");
        let mut f = OutputFile::create(&p).unwrap();
        f.write_all(b"{}").unwrap();
        assert!(!p.exists(), "nothing under the name before commit");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        // Dropped uncommitted: the old file stays, the temporary one goes.
        let mut f = OutputFile::create(&p).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn errors_name_the_path() {
        let e = OutputFile::create(Path::new("/nonexistent-dir/r.json")).unwrap_err();
        assert!(
            e.to_string().starts_with("/nonexistent-dir/r.json: "),
            "{e}"
        );
        let full = named(
            Path::new("out/a.pcap"),
            io::Error::from(io::ErrorKind::StorageFull),
        );
        assert_eq!(full.to_string(), "out/a.pcap: no space left on device");
    }
}
