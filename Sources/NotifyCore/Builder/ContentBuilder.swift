/// Builds the ``NotificationContent`` of a message: the sender and the
/// conversation identity once per message, shared by every recipient.
struct ContentBuilder {
    let texts: GenericTexts

    /// The content of `message` in `conversation`; `sender` is `nil` when the
    /// sender's identity is not known (rule 9: fall back to the handle, else a generic name).
    func content(of message: MessageReceived, in conversation: ConversationUpdated, sender: SenderIdentity?)
        -> NotificationContent
    {
        let senderIdentity =
            sender
            ?? SenderIdentity(
                id: message.senderId, displayName: message.senderHandle ?? texts.unknownSender,
                handle: message.senderHandle)
        let isGroup = conversation.kind == .group
        let conversationIdentity = ConversationIdentity(
            id: conversation.conversationId, isGroup: isGroup, name: conversation.name, imageURL: conversation.imageURL)
        let text = message.text ?? ""
        return NotificationContent(
            title: isGroup ? conversation.name ?? texts.unnamedGroup : senderIdentity.displayName,
            subtitle: isGroup ? senderIdentity.displayName : nil,
            body: text.isEmpty ? texts.sentDescription(message.kind) : text,
            threadId: conversation.conversationId,
            category: NotificationCategories.messageCategory,
            userInfo: NotificationUserInfo(
                talkroomId: conversation.conversationId, messageId: message.messageId, senderId: message.senderId),
            sender: senderIdentity,
            conversation: conversationIdentity,
            kind: message.kind,
            attachment: message.attachment,
            identityResolved: sender != nil)
    }
}

extension IdentityUpdated {
    /// The sender as every rendering shows it.
    var senderIdentity: SenderIdentity {
        SenderIdentity(id: userId, displayName: displayName, handle: handle, imageURL: imageURL)
    }
}
