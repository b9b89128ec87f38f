//! AWS Signature Version 4 for S3 requests without a body (AWS "Signature
//! Version 4 signing process", S3 "Authenticating Requests: Using the
//! Authorization Header"), over `sha2` (HMAC per RFC 2104).
//!
//! ```text
//! canonical request = METHOD \n /uri-encoded/key \n query \n
//!                     name:value \n ... (sorted, lower-case) \n
//!                     signed;header;names \n hex(sha256(payload))
//! string to sign    = AWS4-HMAC-SHA256 \n 20130524T000000Z \n
//!                     20130524/region/s3/aws4_request \n hex(sha256(canonical request))
//! signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), "s3"), "aws4_request")
//! ```

use sha2::{Digest, Sha256};

/// `hex(sha256(""))`: the payload hash of a request without a body.
pub(crate) const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// HMAC-SHA256 (RFC 2104 §2, block size 64 bytes).
fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.iter().map(|k| k ^ byte).collect::<Vec<u8>>();
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(data.as_bytes()).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().to_vec()
}

/// Percent-encodes a key for the canonical URI and the request path: every
/// byte but the unreserved ones (`A-Z a-z 0-9 - _ . ~`) and `/`.
pub(crate) fn encode_path(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for b in key.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encodes a query-string name or value: every byte but the
/// unreserved ones (`A-Z a-z 0-9 - _ . ~`).
pub(crate) fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `hex(sha256(bytes))`: the `x-amz-content-sha256` of a request body.
pub(crate) fn payload_sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// What signs a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signer<'a> {
    pub access_key: &'a str,
    pub secret_key: &'a str,
    pub region: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

impl Signer<'_> {
    /// The `Authorization` header of a request of `method` on the encoded
    /// path `uri`, with `headers` (lower-case names; all of them signed).
    /// `query` is the canonical query string (names sorted, names and values
    /// encoded with [`encode_query_value`], `name=` for a name without
    /// value), empty for none.
    pub fn authorization(&self, method: &str, uri: &str, query: &str, headers: &[(&str, &str)]) -> String {
        let mut headers: Vec<(&str, &str)> = headers.to_vec();
        headers.sort();
        let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{}\n", v.trim())).collect();
        let signed: Vec<&str> = headers.iter().map(|(n, _)| *n).collect();
        let signed = signed.join(";");
        let payload = headers.iter().find(|(n, _)| *n == "x-amz-content-sha256").map_or(EMPTY_SHA256, |(_, v)| v);
        let canonical = format!("{method}\n{uri}\n{query}\n{canonical_headers}\n{signed}\n{payload}");
        let date = self.amz_date.get(..8).unwrap_or(self.amz_date);
        let scope = format!("{date}/{}/s3/aws4_request", self.region);
        let to_sign = format!("AWS4-HMAC-SHA256\n{}\n{scope}\n{}", self.amz_date, hex(&Sha256::digest(canonical)));
        let key = [date, self.region, "s3", "aws4_request"]
            .iter()
            .fold(format!("AWS4{}", self.secret_key).into_bytes(), |key, part| hmac(&key, part));
        let signature = hex(&hmac(&key, &to_sign));
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            self.access_key
        )
    }
}

/// `YYYYMMDDTHHMMSSZ` of a time in seconds since the Unix epoch (UTC; days
/// to a civil date as in H. Hinnant's `civil_from_days`).
pub(crate) fn amz_date(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "GET Object" example of the S3 documentation ("Examples: Signature
    /// Calculations in AWS Signature Version 4"), with its published signature.
    #[test]
    fn aws_documentation_example() {
        let signer = Signer {
            access_key: "AKIAIOSFODNN7EXAMPLE",
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
            amz_date: "20130524T000000Z",
        };
        let auth = signer.authorization(
            "GET",
            "/test.txt",
            "",
            &[
                ("host", "examplebucket.s3.amazonaws.com"),
                ("range", "bytes=0-9"),
                ("x-amz-content-sha256", EMPTY_SHA256),
                ("x-amz-date", "20130524T000000Z"),
            ],
        );
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    /// RFC 4231 test case 2 (a key shorter than the block) and 6 (longer).
    #[test]
    fn hmac_sha256_vectors() {
        assert_eq!(
            hex(&hmac(b"Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac(&[0xaa; 131], "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn dates_and_paths() {
        assert_eq!(amz_date(0), "19700101T000000Z");
        assert_eq!(amz_date(1_369_353_600), "20130524T000000Z");
        assert_eq!(amz_date(951_782_400 + 3_661), "20000229T010101Z");
        assert_eq!(encode_path("/a b/c+d~é.root"), "/a%20b/c%2Bd~%C3%A9.root");
        assert_eq!(encode_query_value("a/b+c=d.e"), "a%2Fb%2Bc%3Dd.e");
        assert_eq!(payload_sha256(b""), EMPTY_SHA256);
    }
}
