//! The client's IP address. Forwarded headers (`Forwarded`, `X-Forwarded-For`) are
//! believed only when the socket peer is a configured trusted proxy; otherwise any
//! client could claim any address and escape per-IP rate limits.
//!
//! Behind a chain of trusted proxies, the client is the right-most address in the
//! forwarded list that is not itself a trusted proxy (each proxy appends the address it
//! received from, so entries to the left of an untrusted hop may be forged).

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

/// The trusted proxies of a server.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    pub fn new(blocks: Vec<Cidr>) -> Self {
        TrustedProxies(blocks)
    }

    /// Parses a comma-separated list (`10.0.0.0/8, 127.0.0.1`).
    pub fn parse(list: &str) -> Result<Self, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Cidr::parse)
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(ip))
    }

    /// The client address for a request from `peer` with these headers.
    pub fn client_ip(&self, peer: IpAddr, headers: &http::HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        // RFC 7239 `Forwarded` wins over the de facto `X-Forwarded-For`.
        let chain: Vec<IpAddr> = if headers.contains_key(http::header::FORWARDED) {
            headers
                .get_all(http::header::FORWARDED)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(forwarded_for)
                .collect()
        } else {
            headers
                .get_all(http::HeaderName::from_static("x-forwarded-for"))
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter_map(|s| parse_addr(s.trim()))
                .collect()
        };
        // Walk from the right: the first hop that is not a trusted proxy is the client.
        for ip in chain.iter().rev() {
            let ip = canonical(*ip);
            if !self.trusts(ip) {
                return ip;
            }
        }
        chain.first().map(|ip| canonical(*ip)).unwrap_or(peer)
    }
}

/// The `for=` addresses of one `Forwarded` header value, in order.
fn forwarded_for(value: &str) -> Vec<IpAddr> {
    value
        .split(',')
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (k, v) = pair.split_once('=')?;
                if !k.trim().eq_ignore_ascii_case("for") {
                    return None;
                }
                parse_addr(v.trim().trim_matches('"'))
            })
        })
        .collect()
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
        let h = headers(&[
            ("forwarded", "for=\"[2001:db8::7]:443\";proto=https, for=10.1.1.1"),
            ("x-forwarded-for", "5.5.5.5"),
        ]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("2001:db8::7"));
        let h = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "2.2.2.2")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("2.2.2.2"));
        // No header: the proxy itself.
        assert_eq!(p.client_ip(ip("127.0.0.1"), &http::HeaderMap::new()), ip("127.0.0.1"));
        // Garbage is skipped.
        let h = headers(&[("x-forwarded-for", "not-an-ip, 3.3.3.3:8080")]);
        assert_eq!(p.client_ip(ip("127.0.0.1"), &h), ip("3.3.3.3"));
    }
}
