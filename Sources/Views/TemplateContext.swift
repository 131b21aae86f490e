import Mustache

/// A page's context as swift-mustache reads it fastest: dictionaries, arrays and plain values.
///
/// swift-mustache looks a name up in a typed value through `Mirror`, filtering its stored properties
/// and resolving their types by mangled name at every lookup, and a name a row does not have is
/// looked up so in every value around it too: a journal page of 50 entries spent 80 % of its 17 ms
/// there. A dictionary answers with one hash lookup. The value is walked once, through its
/// `Encodable` conformance (generated code, no reflection), and the template sees the same names:
/// its stored properties, nil optionals absent. Values that render themselves
/// (`MustacheCustomRenderable`, such as ``RenderedFragments``) are kept as they are, and a value that
/// is not `Encodable` is passed on unchanged.
///
/// Written here rather than taken from a library: none on the packages' list encodes to plain values.
enum TemplateContext {
    /// `value` as dictionaries (`[String: Any]`), arrays (`[Any]`) and the values in them.
    static func make(_ value: Any) -> Any {
        guard let encodable = value as? any Encodable else { return value }
        return convert(encodable).resolved ?? value
    }

    /// `value` as the template will see it once resolved.
    fileprivate static func convert(_ value: some Encodable) -> Member {
        switch value {
        case is String, is Bool, is Int, is Int64, is Double, is MustacheCustomRenderable:
            return .value(value)
        default:
            let node = Node()
            // Our encoder never throws; a conformance that does leaves what it encoded so far.
            try? value.encode(to: NodeEncoder(node: node))
            return .node(node)
        }
    }
}

/// A member of an object or an array: a plain value, or a node (kept as such until the whole value is
/// encoded: telling a node from a plain value by a cast would bridge every dictionary through
/// Objective-C's rules, which cost more than the encoding).
private enum Member {
    case value(Any)
    case node(Node)

    /// The value; nil for a nil optional (absent, as it was).
    var resolved: Any? {
        switch self {
        case .value(let value): value
        case .node(let node): node.resolved
        }
    }
}

/// What one value encodes to, filled in by its containers.
private final class Node {
    enum Content {
        case none
        case null
        case single(Member)
        case keyed([String: Member])
        case unkeyed([Member])
    }

    var content = Content.none

    /// A node that encodes nil.
    static var null: Node {
        let node = Node()
        node.content = .null
        return node
    }

    /// The value, its nested nodes resolved too; nil ones are left out, as absent.
    var resolved: Any? {
        switch content {
        case .none: [String: Any]()
        case .null: nil
        case .single(let member): member.resolved
        case .keyed(let members): members.compactMapValues(\.resolved)
        case .unkeyed(let items): items.compactMap(\.resolved)
        }
    }

    func set(_ member: Member, forKey key: String) {
        guard case .keyed(var members) = content else {
            content = .keyed([key: member])
            return
        }
        content = .none  // one owner of the dictionary while it changes: no copy
        members[key] = member
        content = .keyed(members)
    }

    func append(_ member: Member) {
        guard case .unkeyed(var items) = content else {
            content = .unkeyed([member])
            return
        }
        content = .none
        items.append(member)
        content = .unkeyed(items)
    }

    /// The first keyed container makes the value an object (later ones add to it).
    func beginKeyed() {
        if case .keyed = content { return }
        content = .keyed([:])
    }

    func beginUnkeyed() {
        if case .unkeyed = content { return }
        content = .unkeyed([])
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.beginKeyed()
        return KeyedEncodingContainer(KeyedNode(node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.beginUnkeyed()
        return UnkeyedNode(node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNode(node: node) }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) {}

    mutating func encode(_ value: some Encodable, forKey key: Key) {
        node.set(TemplateContext.convert(value), forKey: key.stringValue)
    }

    // The plain values, which the protocol asks for one by one.
    mutating func encode(_ value: Bool, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) { node.set(.value(value), forKey: key.stringValue) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: nested(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: nested(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: nested(nil)) }

    mutating func superEncoder(forKey key: Key) -> any Encoder { NodeEncoder(node: nested(key)) }

    private func nested(_ key: Key?) -> Node {
        let child = Node()
        node.set(.node(child), forKey: key?.stringValue ?? "super")
        return child
    }
}

/// A container that takes values one at a time (an array's, or a single one's): the plain values the
/// two protocols ask for one by one all go to ``put(_:)``.
private protocol ValueSink {
    mutating func put(_ member: Member)
}

extension ValueSink {
    mutating func encodeNil() { put(.node(.null)) }
    mutating func encode(_ value: some Encodable) { put(TemplateContext.convert(value)) }
    mutating func encode(_ value: Bool) { put(.value(value)) }
    mutating func encode(_ value: String) { put(.value(value)) }
    mutating func encode(_ value: Double) { put(.value(value)) }
    mutating func encode(_ value: Float) { put(.value(value)) }
    mutating func encode(_ value: Int) { put(.value(value)) }
    mutating func encode(_ value: Int8) { put(.value(value)) }
    mutating func encode(_ value: Int16) { put(.value(value)) }
    mutating func encode(_ value: Int32) { put(.value(value)) }
    mutating func encode(_ value: Int64) { put(.value(value)) }
    mutating func encode(_ value: UInt) { put(.value(value)) }
    mutating func encode(_ value: UInt8) { put(.value(value)) }
    mutating func encode(_ value: UInt16) { put(.value(value)) }
    mutating func encode(_ value: UInt32) { put(.value(value)) }
    mutating func encode(_ value: UInt64) { put(.value(value)) }
}

private struct UnkeyedNode: UnkeyedEncodingContainer, ValueSink {
    let node: Node
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    init(node: Node) { self.node = node }

    mutating func put(_ member: Member) {
        node.append(member)
        count += 1
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: nested()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: nested()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: nested()) }

    private mutating func nested() -> Node {
        let child = Node()
        put(.node(child))
        return child
    }
}

private struct SingleNode: SingleValueEncodingContainer, ValueSink {
    let node: Node
    var codingPath: [any CodingKey] { [] }

    mutating func put(_ member: Member) { node.content = .single(member) }
}
