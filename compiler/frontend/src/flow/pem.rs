//! Check JWT's `public_key:`: PEM public keys (`-----BEGIN PUBLIC KEY-----`, an X.509
//! SubjectPublicKeyInfo) read into the JWKs the runtime verifies with, when svc checks
//! the flow: a key that is not RSA, EC P-256 or P-384, or Ed25519 is a diagnostic there,
//! not a refusal of every token at run time.

use serde_json::{Value, json};

const RSA: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01];
const EC: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01];
const P256: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x2B, 0x81, 0x04, 0x00, 0x22];
const ED25519: &[u8] = &[0x2B, 0x65, 0x70];

/// The JWK of each public key of `text` (one or more PEM blocks), or why one cannot be
/// read.
pub fn public_keys(text: &str) -> Result<Vec<Value>, String> {
    let mut keys = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + 11..];
        let label_end = after.find("-----").ok_or("a PEM block's BEGIN line is not closed")?;
        let label = &after[..label_end];
        if label != "PUBLIC KEY" {
            return Err(match label {
                "RSA PUBLIC KEY" => "an `RSA PUBLIC KEY` block (PKCS#1): give the key as a `PUBLIC KEY` block (`openssl rsa -pubin -RSAPublicKey_in -in key.pem -pubout`)".into(),
                l if l.contains("PRIVATE") => "a private key: give the public key only (`openssl pkey -in key.pem -pubout`); never put a private key in a flow".into(),
                "CERTIFICATE" => "a certificate: give its public key (`openssl x509 -in cert.pem -pubkey -noout`)".into(),
                other => format!("a `{other}` block, not a `PUBLIC KEY`"),
            });
        }
        let body = &after[label_end + 5..];
        let end = body
            .find("-----END PUBLIC KEY-----")
            .ok_or("a `PUBLIC KEY` block has no END line")?;
        let der = base64(&body[..end]).ok_or("a `PUBLIC KEY` block is not base64")?;
        keys.push(jwk(&der)?);
        rest = &body[end + 24..];
    }
    if keys.is_empty() {
        return Err("no `-----BEGIN PUBLIC KEY-----` block".into());
    }
    Ok(keys)
}

/// The JWK of a DER SubjectPublicKeyInfo.
fn jwk(der: &[u8]) -> Result<Value, String> {
    let bad = || "the key's DER cannot be read as a public key".to_string();
    let (spki, _) = tlv(der, 0x30).ok_or_else(bad)?;
    let (algorithm, after) = tlv(spki, 0x30).ok_or_else(bad)?;
    let (bits, _) = tlv(after, 0x03).ok_or_else(bad)?;
    let key = match bits.split_first() {
        Some((0, key)) => key,
        _ => return Err(bad()),
    };
    let (oid, params) = tlv(algorithm, 0x06).ok_or_else(bad)?;
    if oid == RSA {
        let (sequence, _) = tlv(key, 0x30).ok_or_else(bad)?;
        let (n, after) = tlv(sequence, 0x02).ok_or_else(bad)?;
        let (e, _) = tlv(after, 0x02).ok_or_else(bad)?;
        let n = strip_zero(n);
        if n.len() < 256 {
            return Err(format!(
                "an RSA key of {} bits: svc verifies with 2048 bits or more",
                n.len() * 8
            ));
        }
        return Ok(json!({ "kty": "RSA", "use": "sig", "n": base64url(n), "e": base64url(strip_zero(e)) }));
    }
    if oid == EC {
        let (curve, _) = tlv(params, 0x06).ok_or_else(bad)?;
        let (name, size) = match curve {
            c if c == P256 => ("P-256", 32),
            c if c == P384 => ("P-384", 48),
            _ => return Err("an EC key on a curve svc does not verify with (P-256 and P-384 are)".into()),
        };
        if key.len() != 1 + 2 * size || key[0] != 4 {
            return Err("an EC key that is not an uncompressed point".into());
        }
        let (x, y) = key[1..].split_at(size);
        return Ok(json!({ "kty": "EC", "use": "sig", "crv": name, "x": base64url(x), "y": base64url(y) }));
    }
    if oid == ED25519 && key.len() == 32 {
        return Ok(json!({ "kty": "OKP", "use": "sig", "crv": "Ed25519", "x": base64url(key) }));
    }
    Err("a key of a type svc does not verify with (RSA, EC P-256 or P-384, and Ed25519 are)".into())
}

/// The content of the DER element at the start of `der` with `tag`, and what follows it.
fn tlv(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&found, rest) = der.split_first()?;
    if found != tag {
        return None;
    }
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7F) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |acc, b| (acc << 8) | *b as usize);
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

fn strip_zero(mut n: &[u8]) -> &[u8] {
    while let [0, rest @ ..] = n {
        n = rest;
    }
    n
}

fn base64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (*b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // `openssl ecparam -name prime256v1 -genkey | openssl pkey -pubout`
    const EC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEf83OJ3D2xF1Bg8vub9tLe1gHMzV7
6e8Tus9uPHvRVEXH8UTNG72bfocs3+257rn0s2ldbqkLJK2KRiMohYjlrQ==
-----END PUBLIC KEY-----";

    #[test]
    fn an_ec_key_reads_as_its_jwk() {
        let keys = public_keys(EC_PEM).unwrap();
        assert_eq!(
            keys,
            [json!({ "kty": "EC", "use": "sig", "crv": "P-256",
                     "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
                     "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0" })]
        );
    }

    #[test]
    fn what_is_not_a_public_key_is_named() {
        assert!(
            public_keys("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
                .unwrap_err()
                .contains("private key")
        );
        assert!(
            public_keys("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----")
                .unwrap_err()
                .contains("certificate")
        );
        assert!(
            public_keys("hello")
                .unwrap_err()
                .contains("no `-----BEGIN PUBLIC KEY-----`")
        );
        assert!(
            public_keys("-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----")
                .unwrap_err()
                .contains("base64")
        );
        assert!(
            public_keys("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")
                .unwrap_err()
                .contains("DER")
        );
    }

    #[test]
    fn base64url_has_no_padding() {
        assert_eq!(base64url(b"a"), "YQ");
        assert_eq!(base64url(b"ab"), "YWI");
        assert_eq!(base64url(b"abc"), "YWJj");
        assert_eq!(base64(" YWJj\nZA== ").unwrap(), b"abcd");
    }
}
