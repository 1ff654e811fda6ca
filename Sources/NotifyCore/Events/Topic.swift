/// The topics of the design brief, by name.
public enum Topic {
    public static let messages = "chat.messages"
    public static let identities = "chat.identities"
    public static let conversations = "chat.conversations"
    public static let devices = "chat.devices"
    public static let preferences = "chat.preferences"
    public static let clientState = "chat.client-state"
    public static let reads = "chat.reads"
    public static let fanout = "notify.fanout"
    public static let commands = "notify.commands"
    public static let outcomes = "notify.outcomes"
    public static let dlq = "notify.dlq"
    public static let fanoutChangelog = "notify.fanout-changelog"
    public static let routeChangelog = "notify.route-changelog"
    /// Stage 1's inputs that a producer partitioned otherwise than murmur2, forwarded to the owning task.
    public static let fanoutRepartition = "notify.fanout-repartition"
    /// Stage 2's inputs that a producer partitioned otherwise than murmur2, forwarded to the owning task.
    public static let routeRepartition = "notify.route-repartition"
}
