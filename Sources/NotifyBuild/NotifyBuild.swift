/// What this build of notify is: `notify --version` prints it and `/metrics` exports it as
/// `notify_build_info{version, commit}`.
public enum NotifyBuild {
    /// The release this source tree is.
    public static let version = "0.1.0"
    /// The git commit the executable was built from: HEAD of the repository at build time, or
    /// `NOTIFY_BUILD_COMMIT` when that was set, or `unknown` when built without git (Plugins/BuildCommit).
    public static let commit = buildCommit
}
