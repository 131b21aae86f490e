import HTTPTypes

extension HTTPFields {
    /// The value of the field `name`, exactly as `self[name]` gives it (the values of several
    /// fields of that name joined), found by one pass over the fields.
    ///
    /// swift-http-types' getter joins the values through lazy sequences even when one field has
    /// the name, which is nearly always: about 2% of a table insert's CPU went to the half dozen
    /// headers each request reads. Only a repeated field takes that path here.
    public func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            if found != nil { return self[name] }
            found = field.value
        }
        return found
    }
}
