/// A parsed document: the members of a top-level object in document order, or any other value.
enum ParsedDocument {
    case object(JSONMembers)
    case value(JSONValue)
}
