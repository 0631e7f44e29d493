package io.fabricrpc.benchmarks.figure3;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Draws the report as a PNG (Java2D, headless): per configuration, visits/ms and (completions + visits)/ms bars. */
final class Figure3Chart {
    private static final int WIDTH = 960;
    private static final int HEIGHT = 540;
    private static final int LEFT = 80;
    private static final int RIGHT = 30;
    private static final int TOP = 70;
    private static final int BOTTOM = 90;
    private static final Color VISITS = new Color(0x4C72B0);
    private static final Color BOTH = new Color(0xDD8452);

    private Figure3Chart() {
    }

    static void write(Figure3Report report, Path png) throws IOException {
        List<String> keys = new ArrayList<>(report.runs().keySet());
        double max = 1;
        for (String k : keys) {
            max = Math.max(max, report.medianCompletionsAndVisits(k));
        }
        double step = niceStep(max / 5);
        double top = Math.ceil(max * 1.15 / step) * step;
        BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, HEIGHT);
            int plotWidth = WIDTH - LEFT - RIGHT;
            int plotHeight = HEIGHT - TOP - BOTTOM;
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString("Seriema Figure 3 shape: Hex " + report.board() + "x" + report.board() + " MCTS, "
                    + report.cores() + " cores", LEFT, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("median per configuration (processes x threads, aggregation); rates after the first phase",
                    LEFT, 48);
            FontMetrics metrics = g.getFontMetrics();
            for (double v = 0; v <= top + 1e-9; v += step) {
                int y = TOP + plotHeight - (int) Math.round(v / top * plotHeight);
                g.setColor(new Color(0xDDDDDD));
                g.drawLine(LEFT, y, LEFT + plotWidth, y);
                g.setColor(Color.DARK_GRAY);
                String label = String.format(Locale.ROOT, step < 1 ? "%.1f" : "%.0f", v);
                g.drawString(label, LEFT - 8 - metrics.stringWidth(label), y + 4);
            }
            g.setColor(Color.BLACK);
            g.drawLine(LEFT, TOP, LEFT, TOP + plotHeight);
            g.drawLine(LEFT, TOP + plotHeight, LEFT + plotWidth, TOP + plotHeight);
            int groupWidth = plotWidth / Math.max(1, keys.size());
            int barWidth = Math.max(8, (int) (groupWidth * 0.8 / 2));
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                double[] values = {report.medianVisits(key), report.medianCompletionsAndVisits(key)};
                Color[] colours = {VISITS, BOTH};
                int groupLeft = LEFT + i * groupWidth + (groupWidth - 2 * barWidth) / 2;
                for (int b = 0; b < 2; b++) {
                    int x = groupLeft + b * barWidth;
                    int y = TOP + plotHeight - (int) Math.round(values[b] / top * plotHeight);
                    g.setColor(colours[b]);
                    g.fillRect(x + 2, y, barWidth - 4, TOP + plotHeight - y);
                    g.setColor(Color.BLACK);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                    String label = String.format(Locale.ROOT, "%.1f", values[b]);
                    FontMetrics m = g.getFontMetrics();
                    g.drawString(label, x + (barWidth - m.stringWidth(label)) / 2, y - 4);
                }
                g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 12));
                FontMetrics m = g.getFontMetrics();
                g.drawString(key, LEFT + i * groupWidth + (groupWidth - m.stringWidth(key)) / 2, TOP + plotHeight + 20);
            }
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            int y = HEIGHT - 30;
            g.setColor(VISITS);
            g.fillRect(LEFT, y - 11, 14, 14);
            g.setColor(Color.BLACK);
            g.drawString("visits/ms", LEFT + 20, y);
            g.setColor(BOTH);
            g.fillRect(LEFT + 120, y - 11, 14, 14);
            g.setColor(Color.BLACK);
            g.drawString("(completions + visits)/ms", LEFT + 140, y);
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(image, "png", png.toFile())) {
            throw new IOException("no PNG writer in this JDK for " + png);
        }
    }

    private static double niceStep(double raw) {
        double p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
        for (double f : new double[] {1, 2, 5, 10}) {
            if (f * p >= raw) {
                return f * p;
            }
        }
        return 10 * p;
    }
}
