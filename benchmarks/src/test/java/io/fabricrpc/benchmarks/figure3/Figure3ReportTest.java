package io.fabricrpc.benchmarks.figure3;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Figure3ReportTest {
    static final String LINE = "MCTS_RESULT processes=2 threads=1 aggregation=trad started=100 completed=100 rootVisits=100 "
            + "visits=300 simulations=100 seconds=1.000 steadyCompletions=%d steadyVisits=%d steadySeconds=2.000 move=f6 "
            + "winrate=0.5500";

    @Test
    void reportsMediansWithTheCoreCountAndDrawsTheChart(@TempDir Path dir) throws Exception {
        Map<String, List<Figure3Report.Run>> runs = new LinkedHashMap<>();
        runs.put("2x1 trad", List.of(Figure3Report.Run.parse(String.format(LINE, 1000, 4000)),
                Figure3Report.Run.parse(String.format(LINE, 3000, 8000)),
                Figure3Report.Run.parse(String.format(LINE, 2000, 6000))));
        Figure3Report report = new Figure3Report(runs, 2, 11, 5, "note");
        assertEquals(3.0, report.medianVisits("2x1 trad"), 1e-9); // 6000 visits over 2 s
        assertEquals(4.0, report.medianCompletionsAndVisits("2x1 trad"), 1e-9);
        String md = report.markdown("chart.png");
        assertTrue(md.contains("| 2x1 | trad | 2 | 3.0 | 4.0 | 2.0 / 4.0 / 3.0 | yes |"), md);
        Path png = dir.resolve("chart.png");
        Figure3Chart.write(report, png);
        BufferedImage image = ImageIO.read(png.toFile());
        assertEquals(960, image.getWidth());
    }
}
