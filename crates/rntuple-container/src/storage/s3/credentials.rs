//! Credentials and region from the standard AWS chain (the part of it that
//! needs no network):
//!
//! 1. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
//! 2. the profile `AWS_PROFILE` (else `default`) of the shared credentials
//!    file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), then
//!    of the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`, section
//!    `[profile NAME]` or `[default]`);
//! 3. none: requests go unsigned (public buckets).
//!
//! Region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region` in the
//! config file, else `us-east-1`. Not supported: SSO, `credential_process`,
//! assume-role profiles, web identity, instance/container metadata.

use std::collections::HashMap;
use std::path::PathBuf;

/// A key pair, with a session token for temporary credentials.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Credentials {
    pub access_key: String,
    pub secret_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret or the token.
        f.debug_struct("Credentials").field("access_key", &self.access_key).finish_non_exhaustive()
    }
}

/// The sections of an INI file: name -> key -> value.
fn parse_ini(text: &str) -> HashMap<String, HashMap<String, String>> {
    let mut sections: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_string();
        } else if let Some((key, value)) = line.split_once('=') {
            sections
                .entry(current.clone())
                .or_default()
                .insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    sections
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn aws_file(var: &str, name: &str) -> Option<String> {
    let path = env(var).map(PathBuf::from).or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".aws").join(name)))?;
    std::fs::read_to_string(path).ok()
}

fn from_section(section: Option<&HashMap<String, String>>) -> Option<Credentials> {
    let s = section?;
    Some(Credentials {
        access_key: s.get("aws_access_key_id")?.clone(),
        secret_key: s.get("aws_secret_access_key")?.clone(),
        session_token: s.get("aws_session_token").cloned(),
    })
}

/// Credentials (if any) and region, from the chain above.
pub(crate) fn load() -> (Option<Credentials>, String) {
    let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".to_string());
    let config = aws_file("AWS_CONFIG_FILE", "config").map(|t| parse_ini(&t)).unwrap_or_default();
    let config_section = config.get(&format!("profile {profile}")).or_else(|| config.get(&profile));
    let credentials = match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        (Some(access_key), Some(secret_key)) => {
            Some(Credentials { access_key, secret_key, session_token: env("AWS_SESSION_TOKEN") })
        }
        _ => {
            let file = aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials").map(|t| parse_ini(&t));
            from_section(file.as_ref().and_then(|f| f.get(&profile))).or_else(|| from_section(config_section))
        }
    };
    let region = env("AWS_REGION")
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .or_else(|| config_section.and_then(|s| s.get("region").cloned()))
        .unwrap_or_else(|| "us-east-1".to_string());
    (credentials, region)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_sections_and_profiles() {
        let text = "# comment\n[default]\naws_access_key_id = AK\naws_secret_access_key=SK\n\n\
                    [profile dev]\nregion = eu-west-1\n; other\n[dev]\naws_access_key_id=A2\n";
        let ini = parse_ini(text);
        let creds = from_section(ini.get("default")).unwrap();
        assert_eq!((creds.access_key.as_str(), creds.secret_key.as_str()), ("AK", "SK"));
        assert_eq!(creds.session_token, None);
        assert_eq!(ini["profile dev"]["region"], "eu-west-1");
        assert!(from_section(ini.get("dev")).is_none(), "a profile without a secret is no credentials");
        assert!(!format!("{creds:?}").contains("SK"), "Debug never shows the secret");
    }
}
