//! Web origins and allowed-origin patterns (Check Origin).
//!
//! An origin is `scheme://host[:port]` (RFC 6454). Matching is exact on all three, with
//! default ports normalised (`https://a.com` = `https://a.com:443`) and the host
//! compared case-insensitively. A pattern may be a wildcard subdomain,
//! `https://*.example.com`, which matches `https://a.example.com` and
//! `https://a.b.example.com` but not `https://example.com` or
//! `https://example.com.evil.com` (it is anchored at the end). `null` (sent by sandboxed
//! frames and `file:` pages) matches only a pattern that is exactly `null`.

use std::fmt;

/// A parsed origin: what a browser sends in the `Origin` header.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Origin {
    /// `null`
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: u16,
    },
}

/// One entry of `allowed_origins`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OriginPattern {
    /// Exactly this origin.
    Exact(Origin),
    /// `scheme://*.suffix[:port]`: any subdomain of `suffix` (at least one label).
    Subdomains { scheme: String, suffix: String, port: u16 },
}

/// Why an origin or pattern was rejected.
pub type OriginError = crate::Invalid;

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

fn valid_host(host: &str) -> bool {
    valid_host_bytes(host.as_bytes())
}

/// Dot-separated labels of letters, digits and inner `-`, 1 to 63 bytes each, 253 bytes
/// at most.
fn valid_host_bytes(host: &[u8]) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split(|&b| b == b'.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
                && label[0] != b'-'
                && label[label.len() - 1] != b'-'
        })
}

/// The port after `:`: 1 to 65535 in decimal digits (leading zeros allowed, as URL
/// parsers do), nothing else.
fn parse_port(digits: &[u8]) -> Option<u16> {
    if digits.is_empty() {
        return None;
    }
    let mut n: u32 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u32::from(d - b'0');
        if n > u32::from(u16::MAX) {
            return None;
        }
    }
    u16::try_from(n).ok().filter(|&p| p > 0)
}

/// Why [`split_parts`] rejected a text.
enum SplitError<'a> {
    NoScheme,
    Scheme(&'a str),
    NotBare,
    UnclosedBracket,
    AfterIpv6,
    Ipv6,
    Port,
}

/// Splits `scheme://host[:port]` into borrowed parts, strictly: no path, query, user
/// info or trailing slash. IPv6 hosts are written in brackets.
fn split_parts(text: &str) -> Result<(&'static str, &str, u16), SplitError<'_>> {
    let (scheme, rest) = text.split_once("://").ok_or(SplitError::NoScheme)?;
    let scheme = if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else {
        return Err(SplitError::Scheme(scheme));
    };
    let default = default_port(scheme).unwrap_or(443);
    if rest.bytes().any(|b| matches!(b, b'/' | b'?' | b'#' | b'@')) {
        return Err(SplitError::NotBare);
    }
    let (host, port) = if let Some(stripped) = rest.strip_prefix('[') {
        let (h, after) = stripped.split_once(']').ok_or(SplitError::UnclosedBracket)?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(SplitError::AfterIpv6),
        };
        if h.is_empty() || !h.bytes().all(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.') {
            return Err(SplitError::Ipv6);
        }
        (&rest[..h.len() + 2], port)
    } else {
        match rest.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        }
    };
    let port = match port {
        None => default,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|c| c.is_ascii_digit()) => n,
            _ => return Err(SplitError::Port),
        },
    };
    Ok((scheme, host, port))
}

/// [`split_parts`], owned and lowercased, with a message for each error.
fn split(text: &str) -> Result<(String, String, u16), OriginError> {
    let message = match split_parts(text) {
        Ok((scheme, host, port)) => return Ok((scheme.to_string(), host.to_ascii_lowercase(), port)),
        Err(SplitError::NoScheme) => format!("`{text}` has no scheme"),
        Err(SplitError::Scheme(s)) => format!("`{text}`: the scheme `{}` is not http or https", s.to_ascii_lowercase()),
        Err(SplitError::NotBare) => format!("`{text}` is not a bare origin"),
        Err(SplitError::UnclosedBracket) => format!("`{text}` has an unclosed `[`"),
        Err(SplitError::AfterIpv6) => format!("`{text}` has text after the IPv6 address"),
        Err(SplitError::Ipv6) => format!("`{text}` has an invalid IPv6 address"),
        Err(SplitError::Port) => format!("`{text}` has an invalid port"),
    };
    Err(OriginError {
        message,
        hint: "an origin is `scheme://host` or `scheme://host:port`, without a path or trailing slash, for example `https://app.example.com`".into(),
    })
}

/// The value of an `Origin` header cut into scheme, host and port, the host not checked
/// yet: what Check Origin matches on every request.
///
/// Checking the host in full (labels, lengths) is only needed for what a pattern could
/// admit: a host equal to an exact pattern's host is valid because that host is, and a
/// wildcard pattern checks only the labels in front of its suffix. So the header is cut
/// once and each pattern does the rest ([`OriginPattern::admits`]), with the same answer
/// as [`Origin::parse`] followed by [`OriginPattern::matches`] on every input (tested on
/// every combination of schemes, hosts and ports, and on random strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginText<'a> {
    /// `null`
    Null,
    /// `scheme://host[:port]`; an IPv6 host, in brackets, is checked in full here (it is
    /// rare, and no wildcard can admit one).
    Tuple {
        scheme: &'static str,
        host: &'a [u8],
        port: u16,
    },
    /// Not an origin, whatever the patterns: no `http`/`https` scheme, or a bad port.
    Invalid,
}

impl<'a> OriginText<'a> {
    pub fn split(text: &'a [u8]) -> OriginText<'a> {
        // `https://` or `http://` in any case, compared eight bytes at a time: setting the
        // 0x20 bit lowercases exactly the letters' positions (the other bytes must match as
        // they are).
        const HTTPS: u64 = u64::from_le_bytes(*b"https://");
        const HTTPS_LETTERS: u64 = u64::from_le_bytes([0x20, 0x20, 0x20, 0x20, 0x20, 0, 0, 0]);
        const HTTP: u64 = u64::from_le_bytes(*b"http://\0");
        const HTTP_LETTERS: u64 = u64::from_le_bytes([0x20, 0x20, 0x20, 0x20, 0, 0, 0, 0]);
        const HTTP_BYTES: u64 = u64::from_le_bytes([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]);
        let (scheme, rest) = match text.first_chunk::<8>().map(|head| u64::from_le_bytes(*head)) {
            Some(head) if head | HTTPS_LETTERS == HTTPS => ("https", &text[8..]),
            Some(head) if (head | HTTP_LETTERS) & HTTP_BYTES == HTTP => ("http", &text[7..]),
            // Shorter than eight bytes: `http://` alone, or no origin at all.
            None if starts_with_ignore_case(text, b"http://") => ("http", &text[7..]),
            _ if text == b"null" => return OriginText::Null,
            _ => return OriginText::Invalid,
        };
        if rest.first() == Some(&b'[') {
            return match std::str::from_utf8(text).map(split_parts) {
                Ok(Ok((scheme, host, port))) => OriginText::Tuple {
                    scheme,
                    host: host.as_bytes(),
                    port,
                },
                _ => OriginText::Invalid,
            };
        }
        let (host, port) = match rest.iter().position(|&b| b == b':') {
            None => (rest, default_port(scheme).unwrap_or(443)),
            Some(colon) => match parse_port(&rest[colon + 1..]) {
                Some(port) => (&rest[..colon], port),
                None => return OriginText::Invalid,
            },
        };
        OriginText::Tuple { scheme, host, port }
    }
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

impl Origin {
    /// Parses the value of an `Origin` header.
    pub fn parse(text: &str) -> Result<Origin, OriginError> {
        if text == "null" {
            return Ok(Origin::Null);
        }
        let (scheme, host, port) = split(text)?;
        if !host.starts_with('[') && !valid_host(&host) {
            return Err(OriginError {
                message: format!("`{text}` has an invalid host"),
                hint: String::new(),
            });
        }
        Ok(Origin::Tuple { scheme, host, port })
    }
}

impl fmt::Display for Origin {
    /// The serialized origin, with the default port omitted (what browsers send).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Null => f.write_str("null"),
            Origin::Tuple { scheme, host, port } if default_port(scheme) == Some(*port) => {
                write!(f, "{scheme}://{host}")
            }
            Origin::Tuple { scheme, host, port } => write!(f, "{scheme}://{host}:{port}"),
        }
    }
}

impl OriginPattern {
    /// Parses an `allowed_origins` entry.
    pub fn parse(text: &str) -> Result<OriginPattern, OriginError> {
        let text = text.trim();
        if text == "*" {
            return Err(OriginError {
                message: "`*` would allow every origin".into(),
                hint:
                    "list the origins that may call this route; a route open to every origin needs no Check Origin node"
                        .into(),
            });
        }
        if text.ends_with('/') {
            return Err(OriginError {
                message: format!("`{text}` ends with `/`"),
                hint: format!("origins have no path: write `{}`", text.trim_end_matches('/')),
            });
        }
        if text != "null" && text.contains("://*.") {
            let (scheme, host, port) = split(text)?;
            let suffix = host.strip_prefix("*.").unwrap_or(&host).to_string();
            if !valid_host(&suffix) || !suffix.contains('.') {
                return Err(OriginError {
                    message: format!("`{text}`: a wildcard must cover the subdomains of a registered domain"),
                    hint: "write `https://*.example.com`".into(),
                });
            }
            return Ok(OriginPattern::Subdomains { scheme, suffix, port });
        }
        if text.contains('*') {
            return Err(OriginError {
                message: format!("`{text}` has a `*` that is not a leading subdomain wildcard"),
                hint: "the only wildcard is a whole leading label: `https://*.example.com`".into(),
            });
        }
        Origin::parse(text).map(OriginPattern::Exact)
    }

    /// Whether the `Origin` header cut into `origin` is a well-formed origin allowed by
    /// this pattern: the same answer as parsing it with [`Origin::parse`] and asking
    /// [`OriginPattern::matches`], with the host checked only as far as this pattern needs
    /// (see [`OriginText`]).
    pub fn admits(&self, origin: &OriginText<'_>) -> bool {
        match (self, origin) {
            (OriginPattern::Exact(Origin::Null), OriginText::Null) => true,
            (
                OriginPattern::Exact(Origin::Tuple { scheme, host, port }),
                OriginText::Tuple {
                    scheme: s,
                    host: h,
                    port: p,
                },
            ) => scheme == s && port == p && host.as_bytes().eq_ignore_ascii_case(h),
            (
                OriginPattern::Subdomains { scheme, suffix, port },
                OriginText::Tuple {
                    scheme: s,
                    host,
                    port: p,
                },
            ) => {
                let suffix = suffix.as_bytes();
                scheme == s
                    && port == p
                    && host.len() > suffix.len() + 1
                    && host[host.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
                    && host[host.len() - suffix.len() - 1] == b'.'
                    // The suffix is a valid host; what is in front of it must be labels,
                    // and the whole no longer than a host may be.
                    && host.len() <= 253
                    && valid_host_bytes(&host[..host.len() - suffix.len() - 1])
            }
            _ => false,
        }
    }

    /// Whether `origin` is allowed by this pattern.
    pub fn matches(&self, origin: &Origin) -> bool {
        match (self, origin) {
            (OriginPattern::Exact(a), b) => a == b,
            (
                OriginPattern::Subdomains { scheme, suffix, port },
                Origin::Tuple {
                    scheme: s,
                    host,
                    port: p,
                },
            ) => {
                s == scheme
                    && p == port
                    && host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host.as_bytes()[host.len() - suffix.len() - 1] == b'.'
            }
            (OriginPattern::Subdomains { .. }, Origin::Null) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pattern` allows `origin` when it is parsed in full and matched.
    fn parsed_and_matched(pattern: &OriginPattern, origin: &str) -> bool {
        Origin::parse(origin).is_ok_and(|o| pattern.matches(&o))
    }

    /// Whether `pattern` allows `origin`, asserting that the per-request matcher (cut,
    /// not parsed) agrees with parsing in full.
    fn allowed(pattern: &str, origin: &str) -> bool {
        let p = OriginPattern::parse(pattern).unwrap();
        let parsed = parsed_and_matched(&p, origin);
        let cut = p.admits(&OriginText::split(origin.as_bytes()));
        assert_eq!(parsed, cut, "{pattern} / {origin}");
        parsed
    }

    #[test]
    fn cut_and_parsed_matching_agree_on_every_pair() {
        let texts = [
            "null",
            "https://example.com",
            "https://EXAMPLE.com:443",
            "http://example.com",
            "https://example.com:8443",
            "https://a.example.com",
            "https://A.B.Example.Com",
            "https://example.com.evil.com",
            "https://evilexample.com",
            "http://localhost:5173",
            "https://[::1]:8080",
            "https://[::1]",
            "https://user@example.com",
            "https://example.com/",
            "ftp://example.com",
            "https://-bad-.com",
            "https://exa mple.com",
            "https://example.com:",
            "https://example.com:0",
        ];
        let patterns = [
            "null",
            "https://example.com",
            "http://example.com:80",
            "https://*.example.com",
            "https://*.example.com:8443",
            "http://localhost:5173",
            "https://[::1]:8080",
        ];
        for p in patterns {
            for t in texts {
                allowed(p, t);
            }
        }
    }

    /// Origin header values to compare the parsers on: every combination of the schemes,
    /// hosts and ports below (hosts in front of `example.com` too, for wildcard patterns),
    /// then random strings over the characters that matter, after a valid scheme.
    fn origin_texts() -> Vec<String> {
        let long_label = "a".repeat(63);
        let too_long_label = "a".repeat(64);
        let long_host = format!("{0}.{0}.{0}.{1}", long_label, "b".repeat(61)); // 253 bytes
        let too_long_host = format!("{long_host}c");
        let schemes = [
            "https://", "HTTPS://", "http://", "HtTp://", "ftp://", "", "https:/", "https//", "null",
        ];
        let hosts = [
            "a.com",
            "A.B.Example.Com",
            "localhost",
            "1.2.3.4",
            "-a.com",
            "a-.com",
            "a--b.com",
            "a..com",
            ".a.com",
            "a.com.",
            "",
            "xn--bcher-kva.example",
            &long_label,
            &too_long_label,
            &long_host,
            &too_long_host,
            "exa mple.com",
            "a_b.com",
            "[::1]",
            "[::1",
            "[::g]",
            "user@a.com",
            "a.com/",
            "é.com",
        ];
        let ports = [
            "",
            ":",
            ":0",
            ":1",
            ":443",
            ":0443",
            ":00000080",
            ":65535",
            ":65536",
            ":99999",
            ":+1",
            ":1:2",
            ":a",
            "/",
            "?x",
            "#",
            "/path",
        ];
        let mut texts = Vec::new();
        for s in schemes {
            for h in hosts {
                for p in ports {
                    texts.push(format!("{s}{h}{p}"));
                    texts.push(format!("{s}{h}.example.com{p}"));
                }
            }
        }
        let alphabet = b"aZ09-.:[]/@ ";
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..20_000 {
            let mut text = String::from(if state & 1 == 0 { "https://" } else { "http://" });
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for k in 0..(state % 12) {
                text.push(alphabet[((state >> (4 * k)) % alphabet.len() as u64) as usize] as char);
            }
            if i % 2 == 1 {
                text.push_str(".example.com");
            }
            texts.push(text);
        }
        texts
    }

    /// Cutting the header and letting each pattern check the host gives the same answer as
    /// parsing it in full and matching, for every pattern below and every text of
    /// [`origin_texts`].
    #[test]
    fn cut_matching_agrees_with_parsed_matching() {
        let patterns = [
            "null",
            "https://example.com",
            "HTTPS://Example.COM:443",
            "http://example.com:8080",
            "https://*.example.com",
            "http://*.example.com:0443",
            "https://*.a.com",
            "https://a.com",
            "http://localhost",
            "https://[::1]",
            "http://[::1]:8080",
        ]
        .map(|p| OriginPattern::parse(p).unwrap());
        let texts = origin_texts();
        assert!(texts.len() > 20_000);
        let mut admitted = 0;
        for text in &texts {
            let cut = OriginText::split(text.as_bytes());
            for pattern in &patterns {
                let expected = parsed_and_matched(pattern, text);
                assert_eq!(pattern.admits(&cut), expected, "{pattern:?} / {text:?}");
                admitted += usize::from(expected);
            }
        }
        // The texts reach both answers often enough to mean something.
        assert!(admitted > 500, "{admitted}");
    }

    #[test]
    fn exact_matching_with_normalisation() {
        assert!(allowed("https://example.com", "https://example.com"));
        assert!(allowed("https://example.com", "https://example.com:443"));
        assert!(allowed("https://example.com:443", "https://example.com"));
        assert!(allowed("https://Example.COM", "https://example.com"));
        assert!(allowed("https://example.com", "HTTPS://EXAMPLE.com"));
        assert!(allowed("http://localhost:5173", "http://localhost:5173"));
    }

    #[test]
    fn the_tricks() {
        // suffix attack
        assert!(!allowed("https://example.com", "https://example.com.evil.com"));
        assert!(!allowed("https://*.example.com", "https://example.com.evil.com"));
        assert!(!allowed("https://*.example.com", "https://evilexample.com"));
        // scheme and port mismatch
        assert!(!allowed("https://example.com", "http://example.com"));
        assert!(!allowed("https://example.com", "https://example.com:8443"));
        assert!(!allowed("http://localhost:3000", "http://localhost:3001"));
        // trailing slash is not an origin
        assert!(!allowed("https://example.com", "https://example.com/"));
        assert!(OriginPattern::parse("https://example.com/").is_err());
        // null matches only null
        assert!(!allowed("https://example.com", "null"));
        assert!(!allowed("https://*.example.com", "null"));
        assert!(allowed("null", "null"));
        // user info, paths
        assert!(!allowed("https://example.com", "https://user@example.com"));
        assert!(!allowed("https://example.com", "https://example.com/path"));
    }

    #[test]
    fn wildcards_are_anchored_subdomains() {
        assert!(allowed("https://*.example.com", "https://a.example.com"));
        assert!(allowed("https://*.example.com", "https://a.b.example.com"));
        assert!(!allowed("https://*.example.com", "https://example.com"));
        assert!(!allowed("https://*.example.com", "http://a.example.com"));
        assert!(!allowed("https://*.example.com", "https://a.example.com:8443"));
        assert!(OriginPattern::parse("https://*").is_err());
        assert!(OriginPattern::parse("https://*.com").is_err());
        assert!(OriginPattern::parse("https://a*.example.com").is_err());
        assert!(OriginPattern::parse("*").is_err());
    }

    #[test]
    fn parsing() {
        assert!(OriginPattern::parse("example.com").is_err());
        assert!(OriginPattern::parse("ftp://example.com").is_err());
        assert!(OriginPattern::parse("https://example.com:0").is_err());
        assert!(OriginPattern::parse("https://example.com:99999").is_err());
        assert!(OriginPattern::parse("https://exa mple.com").is_err());
        assert_eq!(
            Origin::parse("https://[::1]:8080").unwrap().to_string(),
            "https://[::1]:8080"
        );
        assert_eq!(Origin::parse("https://a.com:443").unwrap().to_string(), "https://a.com");
    }
}
