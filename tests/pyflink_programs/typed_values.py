"""Declared types in PyFlink's style: a ROW_NAMED source read by attribute, FLOAT as 32 bits, rows, tuples,
lists, maps and decimals printed by the Java side's rules, and an untyped stream printed with Python's str()."""

from decimal import Decimal

from strom.common import Row, Types
from strom.datastream import StreamExecutionEnvironment


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    people = env.from_collection(
        [(1, "ann", 1.1), (2, "bob", 2.25), (3, "cyd", 1e10)],
        type_info=Types.ROW_NAMED(["id", "name", "score"], [Types.INT(), Types.STRING(), Types.FLOAT()]),
    )
    people.print()
    people.map(lambda r: (r.name, r.score)).print()  # untyped: Python's str() of a tuple
    people.map(
        lambda r: Row(r.name, r.id * 10, [r.id, r.id + 1], {"k": r.score}),
        output_type=Types.ROW(
            [Types.STRING(), Types.LONG(), Types.LIST(Types.INT()), Types.MAP(Types.STRING(), Types.DOUBLE())]
        ),
    ).print()
    people.map(
        lambda r: (r.id, Decimal(r.id) / 8, r.score / 3, r.id % 2 == 0),
        output_type=Types.TUPLE([Types.SHORT(), Types.BIG_DEC(), Types.DOUBLE(), Types.BOOLEAN()]),
    ).print()
    people.map(lambda r: r.score * 1e-12, output_type=Types.DOUBLE()).print()
    people.map(lambda r: r.name.upper(), output_type=Types.STRING()).print()
    env.execute()


if __name__ == "__main__":
    main()
