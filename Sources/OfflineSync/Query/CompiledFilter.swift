/// A filter prepared for testing many rows: its boolean structure flattened into a short program
/// of tests and jumps, and its columns resolved to positions of one ``RowLayout``.
///
/// ``QueryEvaluator/evaluate(_:on:)`` walks the expression tree for every row, which retains and
/// releases each indirect node it visits and finds every column by name. This runs the same
/// rules with neither: `and`/`or`/`not` become jumps over a truth register, a comparison of a
/// column with a literal (the shape nearly every filter has) is one instruction reading the
/// column by position, and any other boolean subexpression (functions, arithmetic, comparisons
/// between two computed operands) is one instruction that hands it to
/// ``QueryEvaluator/evaluate(_:on:)``. The answer is the evaluator's in every case: a boolean
/// position counts a null or a non-boolean as false there too, and `and`/`or` only skip work
/// whose result cannot change the outcome (evaluation has no side effects).
struct CompiledFilter: Sendable {
    /// Where a test reads a value.
    enum Operand: Sendable {
        /// A column at this position of ``CompiledFilter/layout`` (by name on a row laid out
        /// otherwise).
        case column(position: Int, name: String)
        /// A column the layout does not have: read by name (absent reads as null).
        case named(String)
        /// The row's id.
        case id
    }

    enum Instruction: Sendable {
        /// truth = operand `op` literal.
        case compare(Operand, ComparisonOperator, Value)
        /// truth = operand is one of the values.
        case isIn(Operand, [Value])
        /// truth = operand is `true` (a boolean column in a boolean position).
        case isTrue(Operand)
        /// truth = the expression, evaluated by the interpreter, is `true`.
        case general(FilterExpression)
        /// truth = !truth.
        case negate
        /// Go to the instruction at this index when truth is false.
        case jumpIfFalse(Int)
        /// Go to the instruction at this index when truth is true.
        case jumpIfTrue(Int)
    }

    /// The layout whose positions the program reads.
    let layout: RowLayout
    private let program: [Instruction]

    /// `filter` prepared for rows laid out on `layout` (`nil`: every row matches).
    init(_ filter: FilterExpression?, layout: RowLayout) {
        self.layout = layout
        var program: [Instruction] = []
        if let filter { CompiledFilter.emit(filter, layout: layout, into: &program) }
        self.program = program
    }

    /// `true` when `item` satisfies the filter, as `QueryEvaluator.isTrue(evaluate(filter, on:
    /// item))` answers.
    func matches(_ item: Item) -> Bool {
        let direct = item.layout === layout
        var truth = true
        return program.withUnsafeBufferPointer { program in
            var next = 0
            while next < program.count {
                switch program[next] {
                case .compare(let operand, let op, let literal):
                    truth = QueryEvaluator.compare(value(operand, of: item, direct: direct), op, literal)
                case .isIn(let operand, let values):
                    let value = value(operand, of: item, direct: direct)
                    truth = values.contains { ValueSemantics.equal(value, $0) }
                case .isTrue(let operand):
                    truth = QueryEvaluator.isTrue(value(operand, of: item, direct: direct))
                case .general(let expression):
                    truth = QueryEvaluator.isTrue(QueryEvaluator.evaluate(expression, on: item))
                case .negate:
                    truth = !truth
                case .jumpIfFalse(let target):
                    if !truth {
                        next = target
                        continue
                    }
                case .jumpIfTrue(let target):
                    if truth {
                        next = target
                        continue
                    }
                }
                next += 1
            }
            return truth
        }
    }

    @inline(__always)
    private func value(_ operand: Operand, of item: Item, direct: Bool) -> Value {
        switch operand {
        case .column(let position, let name):
            return direct ? (item.slots[position] ?? .null) : item[name]
        case .named(let name):
            return item[name]
        case .id:
            return .string(item.id)
        }
    }

    /// Appends the instructions that leave `expression`'s truth in the register.
    private static func emit(_ expression: FilterExpression, layout: RowLayout, into program: inout [Instruction]) {
        switch expression {
        case .and(let lhs, let rhs), .or(let lhs, let rhs):
            emit(lhs, layout: layout, into: &program)
            let jump = program.count
            program.append(.negate)  // replaced by the jump once its target is known
            emit(rhs, layout: layout, into: &program)
            if case .and = expression {
                program[jump] = .jumpIfFalse(program.count)
            } else {
                program[jump] = .jumpIfTrue(program.count)
            }
        case .not(let operand):
            emit(operand, layout: layout, into: &program)
            program.append(.negate)
        case .comparison(.column(let name), let op, .literal(let value)):
            program.append(.compare(operand(name, layout), op, value))
        case .comparison(.literal(let value), let op, .column(let name)):
            // `literal op column` is `column op' literal` with the operator mirrored; equality is
            // symmetric and the ordering operators give false on a null either way round.
            program.append(.compare(operand(name, layout), mirrored(op), value))
        case .isIn(.column(let name), let values):
            program.append(.isIn(operand(name, layout), values))
        case .column(let name):
            program.append(.isTrue(operand(name, layout)))
        default:
            program.append(.general(expression))
        }
    }

    private static func operand(_ name: String, _ layout: RowLayout) -> Operand {
        if name == "id" { return .id }
        if let position = layout.position(of: name) { return .column(position: position, name: name) }
        return .named(name)
    }

    private static func mirrored(_ op: ComparisonOperator) -> ComparisonOperator {
        switch op {
        case .eq, .ne: return op
        case .gt: return .lt
        case .ge: return .le
        case .lt: return .gt
        case .le: return .ge
        }
    }
}
