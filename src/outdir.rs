//! Where a run's files go, and which directories it may create.
//!
//! * Paths a scenario file names (`outputs.json`, `outputs.pcap.dir`,
//!   `outputs.timeseries.csv`) and their defaults (under `out/`) are relative to the working
//!   directory, or to `--out-dir` when it is given; their directories are created as
//!   needed, and the report lists every directory it created.
//! * Paths given on the command line (`--json`, `--pfc-log`, `--plot`, `--pcap-dir`) are
//!   taken as given: a file's directory must exist, and a directory named on the command
//!   line is created only if its parent exists. Nothing is created elsewhere.

use std::io;
use std::path::{Path, PathBuf};

/// Whether a path came from the scenario file or from the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The file (or its default): its directories may be created.
    File,
    /// The command line: nothing is created above what it names.
    CommandLine,
}

/// The directories a run created, in the order it created them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Created(pub Vec<PathBuf>);

impl Created {
    /// Make sure the directory that will hold file `path` exists: created (with its
    /// parents) for a path from the file; required for one from the command line.
    pub fn file(&mut self, path: &Path, origin: Origin) -> io::Result<()> {
        match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            None => Ok(()),
            Some(dir) if origin == Origin::File => self.all(dir),
            Some(dir) if dir.is_dir() => Ok(()),
            Some(dir) => Err(missing(dir)),
        }
    }

    /// Make sure directory `dir` exists: created with its parents for a path from the
    /// file; for one from the command line created only when its parent exists.
    pub fn dir(&mut self, dir: &Path, origin: Origin) -> io::Result<()> {
        if dir.is_dir() {
            return Ok(());
        }
        if origin == Origin::CommandLine {
            if let Some(parent) = dir.parent().filter(|d| !d.as_os_str().is_empty()) {
                if !parent.is_dir() {
                    return Err(missing(parent));
                }
            }
        }
        self.all(dir)
    }

    /// Create `dir` and its missing parents, recording each one created.
    fn all(&mut self, dir: &Path) -> io::Result<()> {
        let mut missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !d.is_dir())
            .collect();
        missing.reverse();
        for d in missing {
            std::fs::create_dir(d).or_else(|e| if d.is_dir() { Ok(()) } else { Err(e) })?;
            self.0.push(d.to_path_buf());
        }
        Ok(())
    }
}

fn missing(dir: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "directory {} does not exist (create it, or use --out-dir for files the scenario names)",
            dir.display()
        ),
    )
}

/// `path` under `out_dir` when it is relative and an out-dir is given.
pub fn under(out_dir: Option<&Path>, path: &Path) -> PathBuf {
    match out_dir {
        Some(d) if path.is_relative() => d.join(path),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_paths_create_and_record_command_line_paths_do_not() {
        let root = std::env::temp_dir().join(format!("lossless-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let mut c = Created::default();
        let f = root.join("a/b/x.json");
        let e = c.file(&f, Origin::CommandLine).unwrap_err();
        assert!(e.to_string().contains("a/b does not exist"), "{e}");
        assert!(c.0.is_empty() && !root.join("a").exists());
        c.file(&f, Origin::File).unwrap();
        assert_eq!(c.0, vec![root.join("a"), root.join("a/b")]);
        // A command-line directory is created when its parent exists, not above it.
        let mut c = Created::default();
        c.dir(&root.join("plot"), Origin::CommandLine).unwrap();
        assert!(c.dir(&root.join("p/q"), Origin::CommandLine).is_err());
        assert_eq!(c.0, vec![root.join("plot")]);
        assert_eq!(under(Some(&root), Path::new("out/x")), root.join("out/x"));
        assert_eq!(under(Some(&root), Path::new("/abs")), PathBuf::from("/abs"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
