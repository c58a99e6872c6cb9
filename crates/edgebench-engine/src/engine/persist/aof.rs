//! The append-only file in redis-server 7.0's layout: a directory (`appenddirname`) holding
//! a manifest (`<appendfilename>.manifest`) that names one base file (a snapshot, RDB
//! format: `aof-use-rdb-preamble yes`) and the incremental files written since, in order:
//!
//! ```text
//! file appendonly.aof.1.base.rdb seq 1 type b
//! file appendonly.aof.1.incr.aof seq 1 type i
//! ```
//!
//! A rewrite opens a new incremental file when it starts, writes a new base in a child
//! process, and then names only those two in the manifest; the files before them are
//! deleted (`type h` while they wait). So redis-server 7.0 loads the engine's directory and
//! the engine loads redis-server's.
//!
//! Commands are RESP arrays of bulk strings. A file cut short in its last command (a crash
//! mid-write) is loaded up to its last whole command and truncated there when it is the
//! last file and `aof-load-truncated` is on (Redis's default); a transaction whose EXEC never
//! made it to the file is dropped with it. Anything else malformed refuses the load.

use std::path::{Path, PathBuf};

/// A file's role in the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Base,
    Incr,
    History,
}

/// One manifest line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub name: String,
    pub seq: u64,
    pub kind: Kind,
}

/// The manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<FileInfo>,
    pub incrs: Vec<FileInfo>,
    pub history: Vec<FileInfo>,
}

impl Manifest {
    /// Parses a manifest; the error names the line.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut m = Manifest::default();
        for (n, line) in text.lines().enumerate() {
            let n = n + 1;
            if line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.len() < 6 || !words.len().is_multiple_of(2) {
                return Err(format!("line {n}: not `file NAME seq N type b|i|h`"));
            }
            let (mut name, mut seq, mut kind) = (None, None, None);
            for pair in words.chunks(2) {
                match pair[0].to_ascii_lowercase().as_str() {
                    "file" => name = Some(pair[1].to_string()),
                    "seq" => seq = pair[1].parse::<u64>().ok().filter(|&s| s > 0),
                    "type" => kind = Some(pair[1]),
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
                return Err(format!("line {n}: a file, seq or type is missing"));
            };
            if name.contains('/') || name == "." || name == ".." {
                return Err(format!("line {n}: `{name}` is a path, not a file name"));
            }
            let kind = match kind {
                "b" => Kind::Base,
                "i" => Kind::Incr,
                "h" => Kind::History,
                other => return Err(format!("line {n}: unknown file type `{other}`")),
            };
            let info = FileInfo { name, seq, kind };
            match kind {
                Kind::Base if m.base.is_some() => {
                    return Err(format!("line {n}: a second base file"))
                }
                Kind::Base => m.base = Some(info),
                Kind::Incr => {
                    if m.incrs.last().is_some_and(|l| l.seq >= seq) {
                        return Err(format!("line {n}: sequence numbers must grow"));
                    }
                    m.incrs.push(info);
                }
                Kind::History => m.history.push(info),
            }
        }
        Ok(m)
    }

    /// The manifest's text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let kinds = [(Kind::Base, 'b'), (Kind::History, 'h'), (Kind::Incr, 'i')];
        let line = |out: &mut String, f: &FileInfo| {
            let c = kinds
                .iter()
                .find(|(k, _)| *k == f.kind)
                .map_or('i', |(_, c)| *c);
            out.push_str(&format!("file {} seq {} type {c}\n", f.name, f.seq));
        };
        if let Some(b) = &self.base {
            line(&mut out, b);
        }
        for f in &self.history {
            line(&mut out, f);
        }
        for f in &self.incrs {
            line(&mut out, f);
        }
        out
    }

    /// The files to load, in order: the base, then the incremental files.
    pub fn to_load(&self) -> impl Iterator<Item = &FileInfo> {
        self.base.iter().chain(self.incrs.iter())
    }

    /// A new incremental file after the last one.
    pub fn next_incr(&self, stem: &str) -> FileInfo {
        let seq = self.incrs.last().map_or(1, |f| f.seq + 1);
        FileInfo {
            name: format!("{stem}.{seq}.incr.aof"),
            seq,
            kind: Kind::Incr,
        }
    }

    /// A new base file (RDB format) after the current one.
    pub fn next_base(&self, stem: &str) -> FileInfo {
        let seq = self.base.as_ref().map_or(1, |f| f.seq + 1);
        FileInfo {
            name: format!("{stem}.{seq}.base.rdb"),
            seq,
            kind: Kind::Base,
        }
    }
}

/// The manifest's path in `dir` (the AOF directory) for `appendfilename` `stem`.
pub fn manifest_path(dir: &Path, stem: &str) -> PathBuf {
    dir.join(format!("{stem}.manifest"))
}

/// Why a command could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// The data ends inside a command.
    Truncated,
    /// Not a RESP array of bulk strings.
    Bad,
}

/// A command's arguments and where the next command begins.
pub type Command<'a> = (Vec<&'a [u8]>, usize);

/// The most arguments and the longest argument a file's command may claim before its
/// bytes are there (a damaged count must not size an allocation).
const MAX_ARGS: usize = 1 << 20;

/// The command starting at `data[pos..]`: its arguments and where the next begins; `None`
/// at the end of the data.
pub fn next_command(data: &[u8], pos: usize) -> Result<Option<Command<'_>>, ParseError> {
    if pos >= data.len() {
        return Ok(None);
    }
    if data[pos] != b'*' {
        return Err(ParseError::Bad);
    }
    let (argc, mut at) = number(data, pos + 1)?;
    if argc < 1 || argc > MAX_ARGS as u64 {
        return Err(ParseError::Bad);
    }
    let mut args = Vec::with_capacity(argc as usize);
    for _ in 0..argc {
        match data.get(at) {
            None => return Err(ParseError::Truncated),
            Some(b'$') => {}
            Some(_) => return Err(ParseError::Bad),
        }
        let (len, start) = number(data, at + 1)?;
        let len = usize::try_from(len).map_err(|_| ParseError::Bad)?;
        let end = start.checked_add(len).ok_or(ParseError::Bad)?;
        if end + 2 > data.len() {
            return Err(ParseError::Truncated);
        }
        if &data[end..end + 2] != b"\r\n" {
            return Err(ParseError::Bad);
        }
        args.push(&data[start..end]);
        at = end + 2;
    }
    Ok(Some((args, at)))
}

/// A decimal number ending in CRLF at `data[pos..]`, and where the bytes after it start.
fn number(data: &[u8], pos: usize) -> Result<(u64, usize), ParseError> {
    let mut n: u64 = 0;
    let mut i = pos;
    loop {
        match data.get(i) {
            None => return Err(ParseError::Truncated),
            Some(b'\r') => break,
            Some(c @ b'0'..=b'9') => {
                n = n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(u64::from(c - b'0')))
                    .ok_or(ParseError::Bad)?;
            }
            Some(_) => return Err(ParseError::Bad),
        }
        i += 1;
        if i - pos > 20 {
            return Err(ParseError::Bad);
        }
    }
    if i == pos {
        return Err(ParseError::Bad);
    }
    match data.get(i + 1) {
        None => Err(ParseError::Truncated),
        Some(b'\n') => Ok((n, i + 2)),
        Some(_) => Err(ParseError::Bad),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_reads_back_what_it_writes_and_refuses_damage_by_line() {
        let text = "file appendonly.aof.1.base.rdb seq 1 type b\n\
                    file appendonly.aof.1.incr.aof seq 1 type i\n\
                    file appendonly.aof.2.incr.aof seq 2 type i\n";
        let m = Manifest::parse(text).unwrap();
        assert_eq!(m.text(), text);
        assert_eq!(
            m.next_incr("appendonly.aof").name,
            "appendonly.aof.3.incr.aof"
        );
        assert_eq!(
            m.next_base("appendonly.aof").name,
            "appendonly.aof.2.base.rdb"
        );
        assert_eq!(
            m.to_load().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            [
                "appendonly.aof.1.base.rdb",
                "appendonly.aof.1.incr.aof",
                "appendonly.aof.2.incr.aof"
            ]
        );
        assert!(
            Manifest::parse("file a seq 2 type i\nfile b seq 1 type i\n")
                .unwrap_err()
                .starts_with("line 2:")
        );
        assert!(Manifest::parse("file ../x seq 1 type b\n").is_err());
        assert!(Manifest::parse("file x seq 1 type q\n").is_err());
        assert!(Manifest::parse("garbage\n").is_err());
    }

    #[test]
    fn commands_parse_and_a_cut_tail_is_told_from_damage() {
        let data = b"*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n";
        let (args, next) = next_command(data, 0).unwrap().unwrap();
        assert_eq!(args, [&b"DEL"[..], b"k"]);
        let (args, end) = next_command(data, next).unwrap().unwrap();
        assert_eq!(args, [&b"PING"[..]]);
        assert_eq!(next_command(data, end), Ok(None));
        for cut in 1..data.len() - next {
            let short = &data[..data.len() - cut];
            assert_eq!(
                next_command(short, next),
                Err(ParseError::Truncated),
                "cut {cut}"
            );
        }
        assert_eq!(next_command(b"+OK\r\n", 0), Err(ParseError::Bad));
        assert_eq!(
            next_command(b"*1\r\n$3\r\nabcd\r\n", 0),
            Err(ParseError::Bad)
        );
        assert_eq!(next_command(b"*99999999999\r\n", 0), Err(ParseError::Bad));
    }
}
