"""Word count in PyFlink's Table API style (as PyFlink 2.3's ``examples/table/word_count.py`` does, our own code).

``word_count.txt`` beside it is what PyFlink 2.3 printed for its example on the same lines (Hamlet's soliloquy):
a ``@udtf`` splits lines into words, ``group_by(...).select(..., lit(1).count)`` counts them, the ``print``
connector shows the changelog. The test runs this program with ``pyflink`` → ``strom`` in its imports.
"""

from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import udtf

LINES = [
    "To be, or not to be,--that is the question:--",
    "Whether 'tis nobler in the mind to suffer",
    "The slings and arrows of outrageous fortune",
    "Or to take arms against a sea of troubles,",
    "And by opposing end them?--To die,--to sleep,--",
    "No more; and by a sleep to say we end",
    "The heartache, and the thousand natural shocks",
    "That flesh is heir to,--'tis a consummation",
    "Devoutly to be wish'd. To die,--to sleep;--",
    "To sleep! perchance to dream:--ay, there's the rub;",
    "For in that sleep of death what dreams may come,",
    "When we have shuffled off this mortal coil,",
    "Must give us pause: there's the respect",
    "That makes calamity of so long life;",
    "For who would bear the whips and scorns of time,",
    "The oppressor's wrong, the proud man's contumely,",
    "The pangs of despis'd love, the law's delay,",
    "The insolence of office, and the spurns",
    "That patient merit of the unworthy takes,",
    "When he himself might his quietus make",
    "With a bare bodkin? who would these fardels bear,",
    "To grunt and sweat under a weary life,",
    "But that the dread of something after death,--",
    "The undiscover'd country, from whose bourn",
    "No traveller returns,--puzzles the will,",
    "And makes us rather bear those ills we have",
    "Than fly to others that we know not of?",
    "Thus conscience does make cowards of us all;",
    "And thus the native hue of resolution",
    "Is sicklied o'er with the pale cast of thought;",
    "And enterprises of great pith and moment,",
    "With this regard, their currents turn awry,",
    "And lose the name of action.--Soft you now!",
    "The fair Ophelia!--Nymph, in thy orisons",
    "Be all my sins remember'd.",
]


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", "1")
    print("Executing word_count example with default input data set.")
    print("Use --input to specify file input.")
    lines = t_env.from_elements(
        [(line,) for line in LINES], DataTypes.ROW([DataTypes.FIELD("line", DataTypes.STRING())])
    )
    print("Printing result to stdout. Use --output to specify output path.")
    schema = Schema.new_builder().column("word", DataTypes.STRING()).column("count", DataTypes.BIGINT()).build()
    t_env.create_temporary_table("sink", TableDescriptor.for_connector("print").schema(schema).build())

    @udtf(result_types=[DataTypes.STRING()])
    def split(line: Row):  # type: ignore[no-untyped-def]
        for word in line[0].split():
            yield Row(word)

    lines.flat_map(split).alias("word").group_by(col("word")).select(col("word"), lit(1).count).execute_insert(
        "sink"
    ).wait()


if __name__ == "__main__":
    main()
