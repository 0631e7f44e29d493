package io.fabricrpc.benchmarks.table2;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The raw results of one Table 2 run, next to its report ({@code NAME.raw.txt} beside {@code NAME.md}): a header,
 * then one {@link Table2Rank#RESULT} line per measurement (rank 0's and the baselines'), each appended and synced as
 * soon as it is measured, so that a process that dies later (a baseline's teardown, a killed guest) takes no
 * measured round with it.
 */
final class Table2RawFile {
    private Table2RawFile() {
    }

    /** {@code dir/NAME.raw.txt} for the report {@code dir/NAME.md}. */
    static Path besideReport(Path report) {
        String name = report.getFileName().toString();
        return report.resolveSibling((name.endsWith(".md") ? name.substring(0, name.length() - 3) : name) + ".raw.txt");
    }

    /** Starts the file anew with {@code header} (each line prefixed with '#'). */
    static void start(Path file, String header) throws IOException {
        StringBuilder text = new StringBuilder();
        header.lines().forEach(line -> text.append("# ").append(line).append('\n'));
        Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
    }

    /** Appends one line, synced; a failure is printed, not thrown (the run's stdout still has the line). */
    static void append(Path file, String line) {
        try {
            Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND, StandardOpenOption.WRITE, StandardOpenOption.DSYNC);
        } catch (IOException e) {
            System.out.println("cannot append to the raw results " + file + ": " + e);
        }
    }

    /** Every result line of the file, in order. */
    static List<Table2Result> read(Path file) throws IOException {
        List<Table2Result> results = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.startsWith(Table2Rank.RESULT)) {
                results.add(Table2Result.parse(line));
            }
        }
        return results;
    }

    /**
     * How many rounds, from round 0 on, have all {@code perRound} of rank 0's measurements among {@code results}
     * (the columns' results; the baselines' are not counted).
     */
    static int completeRounds(List<Table2Result> results, List<String> columns, int perRound, int rounds) {
        int complete = 0;
        while (complete < rounds) {
            int round = complete;
            long measured = results.stream().filter(r -> r.round() == round && columns.contains(r.column())).count();
            if (measured < perRound) {
                break;
            }
            complete++;
        }
        return complete;
    }
}
