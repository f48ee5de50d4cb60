use syncd::config::Config;

#[test]
fn zero_attempts_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "listen = \"127.0.0.1:9000\"\n[retry]\nattempts = 0\ninitial_delay_ms = 10\nmax_delay_ms = 100\n",
    )
    .unwrap();
    let err = Config::load(&path).unwrap_err();
    assert!(err.to_string().contains("retry.attempts"));
}
