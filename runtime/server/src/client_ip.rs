//! The client's IP address. A forwarding header is believed only when the socket peer is
//! a configured trusted proxy; otherwise any client could claim any address and escape
//! per-IP rate limits.
//!
//! The operator names the **one** header their proxy writes (`--client-ip-header`,
//! default `X-Forwarded-For`, which nginx's `$proxy_add_x_forwarded_for` appends to); every
//! other forwarding header is ignored, as nginx's `real_ip_header` does. A proxy passes
//! headers it does not write through unchanged, so believing a second kind would let a
//! client forge it.
//!
//! Behind a chain of trusted proxies, the client is the right-most address in the header
//! that is not itself a trusted proxy: each proxy appends the address it received from,
//! so entries to the left of an untrusted hop may be forged. An entry that cannot be read
//! (`unknown`, an obfuscated `Forwarded` identifier, garbage) ends the walk: the client is
//! then the last trusted hop, never an entry further left, which the client could have
//! written.

use std::net::IpAddr;

/// A CIDR block of trusted proxies: `10.0.0.0/8`, `::1/128`, or a single address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Cidr, String> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("`{text}` is not an IP address or CIDR block"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}` has an invalid prefix length"))?,
        };
        Ok(Cidr { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u32::MAX << (32 - self.prefix)
                };
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = if self.prefix == 0 {
                    0
                } else {
                    u128::MAX << (128 - self.prefix)
                };
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`) as IPv4, so one client has one key.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// The one header a trusted proxy reports the client's address in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ClientIpHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (the default).
    #[default]
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for="[2001:db8::1]:443"`.
    Forwarded,
    /// Any other header holding an address, or a comma-separated list of them
    /// (`X-Real-IP`, `CF-Connecting-IP`, `True-Client-IP`, `Fly-Client-IP`).
    Other(http::HeaderName),
}

impl ClientIpHeader {
    /// A header name as an operator writes it (any case).
    pub fn parse(name: &str) -> Result<Self, String> {
        let header = http::HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("`{name}` is not a header name"))?;
        Ok(match header.as_str() {
            "x-forwarded-for" => ClientIpHeader::XForwardedFor,
            "forwarded" => ClientIpHeader::Forwarded,
            _ => ClientIpHeader::Other(header),
        })
    }

    pub fn name(&self) -> &str {
        match self {
            ClientIpHeader::XForwardedFor => "x-forwarded-for",
            ClientIpHeader::Forwarded => "forwarded",
            ClientIpHeader::Other(h) => h.as_str(),
        }
    }

    /// The entries of every line of this header, last first: `None` for an entry that is
    /// not an address. Read byte-wise: a line with a byte that is not text (`\xff`) is
    /// still split at its commas, so that the entries a trusted proxy appended to its
    /// right are read, and the walk stops at the unreadable entry itself, as nginx's
    /// realip module does; dropping the whole line would end it at the proxy.
    fn entries_from_right<'h>(&'h self, headers: &'h http::HeaderMap) -> impl Iterator<Item = Option<IpAddr>> + 'h {
        headers.get_all(self.name()).iter().rev().flat_map(move |line| {
            line.as_bytes().rsplit(|&b| b == b',').map(move |element| {
                let element = std::str::from_utf8(element).ok()?;
                match self {
                    ClientIpHeader::Forwarded => forwarded_for(element),
                    _ => parse_addr(element.trim()),
                }
            })
        })
    }
}

/// The trusted proxies of a server, and the header they write.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    blocks: Vec<Cidr>,
    header: ClientIpHeader,
}

impl TrustedProxies {
    pub fn new(blocks: Vec<Cidr>) -> Self {
        TrustedProxies {
            blocks,
            header: ClientIpHeader::default(),
        }
    }

    /// Parses a comma-separated list (`10.0.0.0/8, 127.0.0.1`).
    pub fn parse(list: &str) -> Result<Self, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Cidr::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies::new)
    }

    /// Believes `header` (and no other) from these proxies.
    pub fn with_header(mut self, header: ClientIpHeader) -> Self {
        self.header = header;
        self
    }

    pub fn header(&self) -> &ClientIpHeader {
        &self.header
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.blocks.iter().any(|c| c.contains(ip))
    }

    /// The client address for a request from `peer` with these headers.
    pub fn client_ip(&self, peer: IpAddr, headers: &http::HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        // Walk from the right. Each trusted hop vouches for the entry to its left; the
        // first hop that is not trusted is the client, and an entry no trusted hop could
        // have written readably ends the walk at the last trusted one.
        let mut last_trusted = peer;
        for entry in self.header.entries_from_right(headers) {
            let Some(ip) = entry else {
                return last_trusted;
            };
            let ip = canonical(ip);
            if !self.trusts(ip) {
                return ip;
            }
            last_trusted = ip;
        }
        last_trusted
    }
}

/// The `for=` address of one element of a `Forwarded` header (`for=1.2.3.4;proto=https`),
/// or `None` when it has none or it is not an address (`unknown`, `_hidden`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        if !k.trim().eq_ignore_ascii_case("for") {
            return None;
        }
        parse_addr(v.trim().trim_matches('"'))
    })
}

/// `1.2.3.4`, `1.2.3.4:5678`, `[2001:db8::1]`, `[2001:db8::1]:443`, `2001:db8::1`.
fn parse_addr(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse() {
        return Some(ip);
    }
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split_once(']').and_then(|(ip, _)| ip.parse().ok());
    }
    s.rsplit_once(':').and_then(|(ip, _)| ip.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        for (k, v) in pairs {
            h.append(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn cidrs() {
        let c = Cidr::parse("10.0.0.0/8").unwrap();
        assert!(c.contains(ip("10.1.2.3")));
        assert!(!c.contains(ip("11.0.0.1")));
        assert!(c.contains(ip("::ffff:10.0.0.1")));
        assert!(Cidr::parse("::1").unwrap().contains(ip("::1")));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("example").is_err());
    }

    #[test]
    fn forwarded_headers_are_ignored_from_untrusted_peers() {
        let none = TrustedProxies::default();
        let h = headers(&[("x-forwarded-for", "1.1.1.1"), ("forwarded", "for=2.2.2.2")]);
        assert_eq!(none.client_ip(ip("9.9.9.9"), &h), ip("9.9.9.9"));
    }

    #[test]
    fn trusted_proxies_reveal_the_client() {
        let p = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
        let h = headers(&[("x-forwarded-for", "6.6.6.6, 1.2.3.4, 10.0.0.7")]);
        // 10.0.0.7 is a trusted hop; 1.2.3.4 is the first untrusted one from the right.
        assert_eq!(p.client_ip(ip("10.0.0.1"), &h), ip("1.2.3.4"));
        let h = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "2.2.2.2")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("2.2.2.2"));
        // No header: the proxy itself.
        assert_eq!(p.client_ip(ip("127.0.0.1"), &http::HeaderMap::new()), ip("127.0.0.1"));
        // Every hop trusted: the left-most, the first proxy.
        let h = headers(&[("x-forwarded-for", "10.0.0.3, 10.0.0.2")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("10.0.0.3"));
        // Ports and IPv4-mapped addresses.
        let h = headers(&[("x-forwarded-for", "[::ffff:3.3.3.3]:8080")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("3.3.3.3"));
    }

    /// One proxy (nginx appends the address it received from), two, three: the client is
    /// the address the outermost trusted proxy saw, whatever the client wrote to its left.
    #[test]
    fn each_proxy_depth_finds_the_address_the_outermost_proxy_saw() {
        let p = TrustedProxies::parse("10.0.0.0/8").unwrap();
        for depth in 1..=3 {
            // What the client forged, then what each proxy appended.
            let mut chain = vec!["6.6.6.6".to_string(), "203.0.113.9".to_string()];
            chain.extend((1..depth).map(|i| format!("10.0.0.{i}")));
            let h = headers(&[("x-forwarded-for", &chain.join(", "))]);
            assert_eq!(p.client_ip(ip("10.9.9.9"), &h), ip("203.0.113.9"), "depth {depth}");
        }
    }

    #[test]
    fn only_the_named_header_is_believed() {
        let p = TrustedProxies::parse("127.0.0.1").unwrap();
        // The default believes X-Forwarded-For only: a client's own `Forwarded`,
        // `X-Real-IP` or `True-Client-IP`, which nginx passes through, is ignored.
        let h = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=198.51.100.1"),
            ("x-real-ip", "198.51.100.2"),
            ("true-client-ip", "198.51.100.3"),
        ]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        let h = headers(&[("forwarded", "for=198.51.100.1")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("127.0.0.1"));

        let forwarded = p.clone().with_header(ClientIpHeader::parse("Forwarded").unwrap());
        let h = headers(&[
            ("forwarded", "for=\"[2001:db8::7]:443\";proto=https, for=127.0.0.1"),
            ("x-forwarded-for", "198.51.100.1"),
        ]);
        assert_eq!(forwarded.client_ip(ip("127.0.0.1"), &h), ip("2001:db8::7"));

        let real_ip = p.with_header(ClientIpHeader::parse("X-Real-IP").unwrap());
        assert_eq!(real_ip.header().name(), "x-real-ip");
        let h = headers(&[("x-real-ip", "203.0.113.9"), ("x-forwarded-for", "198.51.100.1")]);
        assert_eq!(real_ip.client_ip(ip("127.0.0.1"), &h), ip("203.0.113.9"));
    }

    /// An entry that is not an address ends the walk: the client is the last trusted hop,
    /// never a forged entry to its left.
    #[test]
    fn an_unreadable_entry_ends_the_walk() {
        let p = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
        let h = headers(&[("x-forwarded-for", "198.51.100.1, not-an-ip")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("127.0.0.1"));
        let h = headers(&[("x-forwarded-for", "198.51.100.1, unknown, 10.0.0.4")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("10.0.0.4"));
        let h = headers(&[("x-forwarded-for", "198.51.100.1,")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("127.0.0.1"));

        let p = p.with_header(ClientIpHeader::Forwarded);
        for hidden in ["for=unknown", "for=_hidden", "by=10.0.0.1", "for=\"[bad]\""] {
            let h = headers(&[("forwarded", &format!("for=198.51.100.1, {hidden}"))]);
            assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("127.0.0.1"), "{hidden}");
        }
    }

    /// A byte that is not text ends the walk at its own entry, never at the proxy that
    /// appended the client's real address to its right (before, the whole line was
    /// dropped: the client passed for the proxy, with the proxy's budget).
    #[test]
    fn malformed_entries_end_the_walk_where_they_stand() {
        let p = TrustedProxies::parse("127.0.0.1").unwrap();
        let raw = |lines: &[&[u8]]| {
            let mut h = http::HeaderMap::new();
            for line in lines {
                h.append("x-forwarded-for", http::HeaderValue::from_bytes(line).unwrap());
            }
            h
        };
        let cases: &[(&[&[u8]], &str)] = &[
            // What nginx writes after a client's `X-Forwarded-For: \xff`.
            (&[b"\xff, 6.6.6.6"], "6.6.6.6"),
            (&[b"1.1.1.1, \xff\xfe, 6.6.6.6"], "6.6.6.6"),
            (&[b"6.6.6.6 \x80"], "127.0.0.1"),
            (&[b"\xc3\xa9"], "127.0.0.1"),
            (&[b"\xff", b"6.6.6.6"], "6.6.6.6"),
            (&[b"6.6.6.6", b"\xff"], "127.0.0.1"),
            (&[b"1.2.3.4:\xff"], "127.0.0.1"),
            (&[b", , 6.6.6.6"], "6.6.6.6"),
            (&[b""], "127.0.0.1"),
        ];
        for (lines, client) in cases {
            assert_eq!(p.client_ip(ip("127.0.0.1"), &raw(lines)), ip(client), "{lines:?}");
        }
        let forwarded = p.with_header(ClientIpHeader::Forwarded);
        let mut h = http::HeaderMap::new();
        h.append(
            "forwarded",
            http::HeaderValue::from_bytes(b"for=\xff, for=6.6.6.6").unwrap(),
        );
        assert_eq!(forwarded.client_ip(ip("127.0.0.1"), &h), ip("6.6.6.6"));
    }

    #[test]
    fn header_names_are_checked() {
        assert_eq!(
            ClientIpHeader::parse("X-Forwarded-For").unwrap(),
            ClientIpHeader::XForwardedFor
        );
        assert_eq!(ClientIpHeader::parse("forwarded").unwrap(), ClientIpHeader::Forwarded);
        assert!(ClientIpHeader::parse("not a header").is_err());
        assert!(ClientIpHeader::parse("").is_err());
    }
}
