import FaultProxy
import Testing

/// The first rule that fires decides: a plan says which of its rules can never fire.
struct FaultPlanTests {
    static func plan(_ rules: String...) throws -> FaultPlan {
        FaultPlan(try rules.map { text throws in try FaultRule(parsing: text) })
    }

    @Test func aRuleAfterOneThatAlwaysFiresIsShadowed() throws {
        let shadowed = try Self.plan("delay=25", "drop,p=0.2").shadowedRules
        #expect(shadowed.map(\.rule.description) == ["drop,p=0.2"])
        #expect(shadowed.map(\.by.description) == ["delay=25"])
    }

    @Test func aRuleThatFiresOnlySometimesOrOnFewerRequestsShadowsNothing() throws {
        #expect(try Self.plan("drop,p=0.2", "delay=25").shadowedRules.isEmpty)
        #expect(try Self.plan("delay=25,p=0.5", "drop").shadowedRules.isEmpty)
        #expect(try Self.plan("delay=25,method=POST", "drop").shadowedRules.isEmpty)
        #expect(try Self.plan("reset,nth=2", "drop").shadowedRules.isEmpty)
        #expect(try Self.plan("status=503,path=/tables/*", "drop,path=/tables/*").shadowedRules.count == 1)
    }
}
