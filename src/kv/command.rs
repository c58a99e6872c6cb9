//! What each request is: the SET:GET mix (`--ratio`, `--multi-key-get`), arbitrary commands
//! (`--command`, `--command-ratio`, `--command-key-pattern`) and the reusable argument buffer
//! requests are rendered into.
//!
//! Follows memtier_benchmark: `client::create_request` (the mix), `client.h`
//! `advance_arbitrary_command_index` (command rotation), `arbitrary_command` in
//! `config_types.cpp` (tokenizing and quoting) and `redis_protocol::format_arbitrary_command`
//! in `protocol.cpp` (placeholders).
//!
//! Invariants:
//! - A [`RequestBuf`] holds one request's arguments back to back in one byte buffer; reusing
//!   it across requests does not allocate once it has grown to the largest request.
//! - `__key__` draws a fresh key for every occurrence (so `MSET __key__ __data__ __key__
//!   __data__` writes two keys); `__data__` draws a fresh value for every occurrence.

use super::data::DataGen;
use super::error::KvConfigError;
use super::keys::{write_decimal, Gaussian, KeyGen, KeyPattern};
use super::options::WaitRatio;
use super::rng::Rng;

/// One operation of the SET:GET mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A SET (or SETEX).
    Set,
    /// A GET.
    Get,
    /// An MGET of this many keys.
    MultiGet(u32),
}

/// memtier's `--ratio SETS:GETS` schedule: `SETS` sets, then `GETS` gets (grouped into MGETs
/// of up to `--multi-key-get` keys), then again (`client::create_request`). Deterministic: over
/// any whole cycle the counts are exact.
#[derive(Debug, Clone)]
pub struct OpMix {
    sets: u32,
    gets: u32,
    multi_key_get: u32,
    set_count: u32,
    get_count: u32,
}

impl OpMix {
    /// A mix of `sets:gets` (not both 0); `multi_key_get` 0 sends single GETs.
    pub fn new(sets: u32, gets: u32, multi_key_get: u32) -> Self {
        assert!(sets > 0 || gets > 0, "--ratio 0:0 is rejected by KvConfig");
        OpMix {
            sets,
            gets,
            multi_key_get,
            set_count: 0,
            get_count: 0,
        }
    }

    /// The next operation.
    pub fn next_op(&mut self) -> Op {
        loop {
            if self.set_count < self.sets {
                self.set_count += 1;
                return Op::Set;
            }
            if self.get_count < self.gets {
                if self.multi_key_get == 0 {
                    self.get_count += 1;
                    return Op::Get;
                }
                let keys = (self.gets - self.get_count).min(self.multi_key_get);
                self.get_count += keys;
                return Op::MultiGet(keys);
            }
            self.set_count = 0;
            self.get_count = 0;
        }
    }
}

/// memtier's `--wait-ratio SETS:WAITS` schedule (`client::create_request`): before each
/// request, a WAIT is due when no WAIT was sent yet, or when sets sent ÷ WAITs sent exceeds
/// SETS ÷ WAITS, both divisions in whole numbers as memtier's C does; otherwise the SET:GET
/// mix goes on. So a run starts with a WAIT, and `--wait-ratio 1:1` sends a WAIT after each
/// SET once the first SET went out. Each WAIT waits for `--num-slaves` replicas (uniform in
/// the range) with `--wait-timeout` ms (normal around the middle of the range, a sixth of it
/// as standard deviation: `client::create_wait_request`). Deterministic given its seed; the
/// picks use their own generator, so WAITs never change which keys or values are sent.
#[derive(Debug, Clone)]
pub struct WaitMix {
    ratio: WaitRatio,
    sets: u64,
    waits: u64,
    rng: Rng,
    timeout: Gaussian,
}

impl WaitMix {
    /// The schedule of `ratio`, drawing its picks from `rng`.
    pub fn new(ratio: WaitRatio, rng: Rng) -> Self {
        let (lo, hi) = ratio.timeout_ms;
        WaitMix {
            ratio,
            sets: 0,
            waits: 0,
            rng,
            timeout: Gaussian::new(
                f64::from(hi - lo) / 6.0,
                f64::from(hi - lo) / 2.0 + f64::from(lo),
            ),
        }
    }

    /// Whether the next request is a WAIT.
    pub fn due(&self) -> bool {
        let (s, w) = (u64::from(self.ratio.sets), u64::from(self.ratio.waits));
        w > 0 && (self.waits == 0 || self.sets / self.waits > s / w)
    }

    /// Counts a SET sent.
    pub fn count_set(&mut self) {
        self.sets += 1;
    }

    /// Counts a WAIT and picks its replica count and timeout (ms).
    pub fn next_wait(&mut self) -> (u64, u64) {
        self.waits += 1;
        let (lo, hi) = self.ratio.num_slaves;
        let replicas = self.rng.range_inclusive(u64::from(lo), u64::from(hi));
        let (lo, hi) = self.ratio.timeout_ms;
        let timeout = self
            .timeout
            .sample(&mut self.rng, u64::from(lo), u64::from(hi));
        (replicas, timeout)
    }
}

/// Rotation over `--command`s: each command `--command-ratio` times in a row, then the next
/// (memtier's `advance_arbitrary_command_index`). Deterministic.
#[derive(Debug, Clone)]
pub struct CommandMix {
    ratios: Box<[u32]>,
    index: usize,
    count: u32,
}

impl CommandMix {
    /// A rotation over commands with these ratios (each ≥ 1, at least one command).
    pub fn new(ratios: impl IntoIterator<Item = u32>) -> Self {
        let ratios: Box<[u32]> = ratios.into_iter().collect();
        assert!(!ratios.is_empty() && ratios.iter().all(|&r| r > 0));
        CommandMix {
            ratios,
            index: 0,
            count: 0,
        }
    }

    /// The index of the next command to send.
    pub fn next_command(&mut self) -> usize {
        if self.count >= self.ratios[self.index] {
            self.count = 0;
            self.index = (self.index + 1) % self.ratios.len();
        }
        self.count += 1;
        self.index
    }
}

/// One argument of an arbitrary command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CommandArg {
    /// Sent as written (after unquoting).
    Literal(Vec<u8>),
    /// `__key__`, possibly with text around it in the same argument (`{tag}__key__`), as
    /// memtier ≥ 2.1 allows.
    Key {
        /// Bytes before `__key__`.
        prefix: Vec<u8>,
        /// Bytes after `__key__`.
        suffix: Vec<u8>,
    },
    /// `__data__`: a value from the object options; must be the whole argument.
    Data,
}

const KEY_PLACEHOLDER: &[u8] = b"__key__";
const DATA_PLACEHOLDER: &[u8] = b"__data__";

/// One `--command` with its `--command-ratio` and `--command-key-pattern`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArbitraryCommand {
    /// The command line as given.
    pub text: String,
    /// The first word, upper-cased: the row name in the statistics (memtier's
    /// `command_name`).
    pub name: String,
    /// The parsed arguments, command name first.
    pub args: Vec<CommandArg>,
    /// Times sent in a row (default 1).
    pub ratio: u32,
    /// How its keys are picked (default `R`).
    pub key_pattern: KeyPattern,
}

impl ArbitraryCommand {
    /// Parses `text` with memtier's rules (see [`tokenize`]), ratio 1, pattern `R`.
    pub fn parse(text: &str) -> Result<Self, KvConfigError> {
        let bad = |fix: &str| KvConfigError::Command {
            command: text.to_string(),
            fix: fix.to_string(),
        };
        let tokens = tokenize(text).map_err(|e| bad(&e))?;
        if tokens.is_empty() {
            return Err(bad(
                "the command is empty; give e.g. --command \"SET __key__ __data__\"",
            ));
        }
        // memtier takes the first space-separated word of the raw text; the first token is the
        // same except when the line starts with a blank or a quote, where it is what was meant.
        let name = String::from_utf8_lossy(&tokens[0]).to_ascii_uppercase();
        let mut args = Vec::with_capacity(tokens.len());
        for (i, tok) in tokens.into_iter().enumerate() {
            let arg = if let Some(at) = find(&tok, KEY_PLACEHOLDER) {
                CommandArg::Key {
                    prefix: tok[..at].to_vec(),
                    suffix: tok[at + KEY_PLACEHOLDER.len()..].to_vec(),
                }
            } else if find(&tok, DATA_PLACEHOLDER).is_some() {
                if tok != DATA_PLACEHOLDER {
                    return Err(bad(
                        "__data__ must be a whole argument (memtier: \"data placeholder can't combined with other data\")",
                    ));
                }
                CommandArg::Data
            } else {
                CommandArg::Literal(tok)
            };
            if i == 0 && !matches!(arg, CommandArg::Literal(_)) {
                return Err(bad(
                    "the first word must be the command name, not __key__ or __data__",
                ));
            }
            args.push(arg);
        }
        Ok(ArbitraryCommand {
            text: text.to_string(),
            name,
            args,
            ratio: 1,
            key_pattern: KeyPattern::Random,
        })
    }

    /// The index of the argument holding the first `__key__` (what cluster mode routes
    /// by), `None` for a keyless command.
    pub fn key_arg(&self) -> Option<usize> {
        self.args
            .iter()
            .position(|a| matches!(a, CommandArg::Key { .. }))
    }

    /// How many `__key__` placeholders the command has.
    pub fn keys_count(&self) -> usize {
        self.args
            .iter()
            .filter(|a| matches!(a, CommandArg::Key { .. }))
            .count()
    }

    /// Renders the command into `out` (cleared first), drawing keys from `stream` of `keys`
    /// and values from `data`. A `__data__` value's size uses the index of the most recent
    /// `__key__` before it (the `S` size pattern needs one), or the key range's start.
    pub fn render(
        &self,
        stream: usize,
        keys: &mut KeyGen,
        data: &mut DataGen,
        out: &mut RequestBuf,
    ) {
        out.clear();
        let mut last_key = keys.range().0;
        for arg in &self.args {
            match arg {
                CommandArg::Literal(bytes) => out.push_arg(bytes),
                CommandArg::Key { prefix, suffix } => {
                    out.begin_arg();
                    out.bytes.extend_from_slice(prefix);
                    last_key = keys.next_key(stream, &mut out.bytes);
                    out.bytes.extend_from_slice(suffix);
                    out.end_arg();
                }
                CommandArg::Data => {
                    let len = data.next_len(last_key);
                    out.push_arg(data.value(len));
                }
            }
        }
    }

    /// Renders the command with every `__key__` replaced by `key` and every `__data__` by
    /// `value`: the exact argument list, for tests and for one-off requests.
    pub fn render_with(&self, key: &[u8], value: &[u8], out: &mut RequestBuf) {
        out.clear();
        for arg in &self.args {
            match arg {
                CommandArg::Literal(bytes) => out.push_arg(bytes),
                CommandArg::Key { prefix, suffix } => {
                    out.begin_arg();
                    out.bytes.extend_from_slice(prefix);
                    out.bytes.extend_from_slice(key);
                    out.bytes.extend_from_slice(suffix);
                    out.end_arg();
                }
                CommandArg::Data => out.push_arg(value),
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Splits a command line into arguments exactly as memtier's
/// `arbitrary_command::split_command_to_args` (itself redis-cli's `sdssplitargs`), with the
/// engine's splitter of inline requests, which is Redis's.
pub fn tokenize(line: &str) -> Result<Vec<Vec<u8>>, String> {
    crate::resp::split_args(line.as_bytes()).map_err(|e| e.to_string())
}

/// One request's arguments, back to back in one buffer. Reuse it: [`RequestBuf::clear`]
/// keeps the capacity.
#[derive(Debug, Clone, Default)]
pub struct RequestBuf {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    open: Option<usize>,
}

impl RequestBuf {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the arguments, keeps the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.open = None;
    }

    /// Appends a whole argument.
    pub fn push_arg(&mut self, arg: &[u8]) {
        self.bytes.extend_from_slice(arg);
        self.ends.push(self.bytes.len());
    }

    /// Appends a decimal number as an argument.
    pub fn push_u64_arg(&mut self, n: u64) {
        write_decimal(n, &mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// Starts an argument written piecewise through [`RequestBuf::arg_bytes`].
    pub fn begin_arg(&mut self) {
        debug_assert!(self.open.is_none());
        self.open = Some(self.bytes.len());
    }

    /// The buffer to append the open argument's bytes to.
    pub fn arg_bytes(&mut self) -> &mut Vec<u8> {
        debug_assert!(self.open.is_some());
        &mut self.bytes
    }

    /// Ends the argument started by [`RequestBuf::begin_arg`].
    pub fn end_arg(&mut self) {
        let was_open = self.open.take();
        debug_assert!(was_open.is_some(), "end_arg without begin_arg");
        self.ends.push(self.bytes.len());
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no arguments.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The arguments in order.
    pub fn args(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(|i| self.arg(i))
    }

    /// The `i`-th argument.
    pub fn arg(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// Appends the request as a RESP array of bulk strings (what every Redis client sends).
    pub fn write_resp(&self, out: &mut Vec<u8>) {
        out.push(b'*');
        write_decimal(self.ends.len() as u64, out);
        out.extend_from_slice(b"\r\n");
        for arg in self.args() {
            out.push(b'$');
            write_decimal(arg.len() as u64, out);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(arg);
            out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        tokenize(s)
            .unwrap()
            .into_iter()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .collect()
    }

    #[test]
    fn tokenizer_follows_memtier_quoting() {
        assert_eq!(toks("  set  __key__ 5 "), ["set", "__key__", "5"]);
        assert_eq!(toks(r#"HSET h "a b" 'c d'"#), ["HSET", "h", "a b", "c d"]);
        assert_eq!(toks(r#"SET k "\x41\n\t\"q\"""#), ["SET", "k", "A\n\t\"q\""]);
        assert_eq!(toks(r"SET k 'it\'s'"), ["SET", "k", "it's"]);
        assert_eq!(toks(r#"SET pre"fix x""#), ["SET", "prefix x"]);
        assert_eq!(toks(""), Vec::<String>::new());
        assert!(tokenize(r#"SET "abc"def"#).is_err());
        assert!(tokenize(r#"SET "abc"#).is_err());
        assert!(tokenize("SET 'abc").is_err());
    }

    #[test]
    fn placeholders_are_substituted_exactly() {
        let cmd = ArbitraryCommand::parse("hset {t}__key__:x f __data__").unwrap();
        assert_eq!(cmd.name, "HSET");
        assert_eq!(cmd.keys_count(), 1);
        let mut buf = RequestBuf::new();
        cmd.render_with(b"memtier-7", b"xxxx", &mut buf);
        let args: Vec<&[u8]> = buf.args().collect();
        assert_eq!(args, [&b"hset"[..], b"{t}memtier-7:x", b"f", b"xxxx"]);
        let mut resp = Vec::new();
        buf.write_resp(&mut resp);
        assert_eq!(
            resp,
            b"*4\r\n$4\r\nhset\r\n$14\r\n{t}memtier-7:x\r\n$1\r\nf\r\n$4\r\nxxxx\r\n"
        );
    }

    #[test]
    fn bad_commands_fail_with_the_reason() {
        let e = ArbitraryCommand::parse("SET k x__data__")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid --command \"SET k x__data__\": __data__ must be a whole argument (memtier: \"data placeholder can't combined with other data\")"
        );
        let e = ArbitraryCommand::parse("__key__ x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("first word must be the command name"), "{e}");
        assert!(ArbitraryCommand::parse("   ").is_err());
    }

    #[test]
    fn ratio_mix_is_exact_per_cycle() {
        let mut m = OpMix::new(1, 10, 0);
        let ops: Vec<Op> = (0..22).map(|_| m.next_op()).collect();
        assert_eq!(ops.iter().filter(|o| **o == Op::Set).count(), 2);
        assert_eq!(ops[0], Op::Set);
        assert_eq!(ops[11], Op::Set);
        assert!(ops[1..11].iter().all(|o| *o == Op::Get));
        let mut only_sets = OpMix::new(1, 0, 0);
        assert!((0..5).all(|_| only_sets.next_op() == Op::Set));
        let mut only_gets = OpMix::new(0, 1, 0);
        assert!((0..5).all(|_| only_gets.next_op() == Op::Get));
    }

    #[test]
    fn multi_key_get_groups_the_gets_of_a_cycle() {
        let mut m = OpMix::new(1, 10, 4);
        let ops: Vec<Op> = (0..8).map(|_| m.next_op()).collect();
        use Op::*;
        assert_eq!(
            ops,
            [
                Set,
                MultiGet(4),
                MultiGet(4),
                MultiGet(2),
                Set,
                MultiGet(4),
                MultiGet(4),
                MultiGet(2)
            ]
        );
    }

    /// The letters of `n` requests: `W` when a WAIT is due, else the SET:GET mix's next op
    /// (`S` or `G`), a set counted as memtier counts it.
    fn schedule(wait_ratio: (u32, u32), ratio: (u32, u32), n: usize) -> String {
        let mut waits = WaitMix::new(
            WaitRatio {
                sets: wait_ratio.0,
                waits: wait_ratio.1,
                num_slaves: (0, 0),
                timeout_ms: (0, 0),
            },
            Rng::new(1),
        );
        let mut ops = OpMix::new(ratio.0, ratio.1, 0);
        (0..n)
            .map(|_| {
                if waits.due() {
                    waits.next_wait();
                    return 'W';
                }
                match ops.next_op() {
                    Op::Set => {
                        waits.count_set();
                        'S'
                    }
                    _ => 'G',
                }
            })
            .collect()
    }

    #[test]
    fn waits_follow_memtiers_whole_number_ratio() {
        // A run starts with a WAIT; then one is due while sets ÷ waits > 1 ÷ 1.
        assert_eq!(schedule((1, 1), (1, 1), 15), "WSGSWGSGSWGSGSW");
        // 3:1 in whole numbers: due at 4 sets per WAIT (4 ÷ 1 > 3), not 3.
        assert_eq!(schedule((3, 1), (1, 0), 16), "WSSSSWSSSSWSSSSW");
        // 1:2 is 0 in whole numbers: a WAIT after every SET.
        assert_eq!(schedule((1, 2), (1, 0), 7), "WSWSWSW");
        // 1:0 (memtier's default) sends none.
        assert_eq!(schedule((1, 0), (1, 1), 6), "SGSGSG");
    }

    #[test]
    fn wait_picks_stay_in_their_ranges() {
        let mut waits = WaitMix::new(
            WaitRatio {
                sets: 1,
                waits: 1,
                num_slaves: (1, 3),
                timeout_ms: (10, 20),
            },
            Rng::new(7),
        );
        let picks: Vec<(u64, u64)> = (0..2000).map(|_| waits.next_wait()).collect();
        for r in 1..=3 {
            assert!(picks.iter().any(|p| p.0 == r), "no WAIT for {r} replicas");
        }
        assert!(picks
            .iter()
            .all(|p| (1..=3).contains(&p.0) && (10..=20).contains(&p.1)));
        // Normal around the middle (15.5 after truncation of [10, 21)), sd 10/6.
        let mean = picks.iter().map(|p| p.1 as f64).sum::<f64>() / picks.len() as f64;
        assert!((14.5..15.5).contains(&mean), "{mean}");
        let fixed = WaitMix::new(
            WaitRatio {
                sets: 1,
                waits: 1,
                num_slaves: (2, 2),
                timeout_ms: (0, 0),
            },
            Rng::new(7),
        )
        .next_wait();
        assert_eq!(fixed, (2, 0));
    }

    #[test]
    fn command_mix_sends_each_command_ratio_times() {
        let mut m = CommandMix::new([2, 1, 3]);
        let got: Vec<usize> = (0..12).map(|_| m.next_command()).collect();
        assert_eq!(got, [0, 0, 1, 2, 2, 2, 0, 0, 1, 2, 2, 2]);
    }
}
