package io.fabricrpc.benchmarks.table2;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Draws the report's table as a PNG with Java2D (headless): one group of bars per payload size, one bar per
 * column, calls/s on a log scale, each bar labelled with its value.
 */
final class Table2Chart {
    private static final int WIDTH = 960;
    private static final int HEIGHT = 540;
    private static final int LEFT = 90;
    private static final int RIGHT = 30;
    private static final int TOP = 70;
    private static final int BOTTOM = 80;
    private static final Color[] PALETTE = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
            new Color(0xC44E52), new Color(0x8172B3), new Color(0x937860), new Color(0xDA8BC3), new Color(0x8C8C8C)};

    private Table2Chart() {
    }

    /** Writes the chart of {@code report}'s median calls/s to {@code png}. */
    static void write(Table2Report report, String title, Path png) throws IOException {
        List<String> columns = report.columns();
        List<Integer> sizes = report.sizes();
        double max = 1;
        double min = Double.MAX_VALUE;
        for (int size : sizes) {
            for (String column : columns) {
                double v = report.medianCallsPerSecond(column, size);
                if (v > 0) {
                    max = Math.max(max, v);
                    min = Math.min(min, v);
                }
            }
        }
        if (min == Double.MAX_VALUE) {
            min = 1;
        }
        int lowDecade = (int) Math.floor(Math.log10(min)) - (min / Math.pow(10, Math.floor(Math.log10(min))) < 2 ? 1 : 0);
        int highDecade = (int) Math.ceil(Math.log10(max * 1.5));
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
            g.drawString(title, LEFT, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("calls/s (log scale), median over rounds; one sender thread (rank 0) to one receiver thread"
                    + " (rank 1), " + report.medium() + (report.columns().stream().anyMatch(report::isBaseline)
                    ? "; ib_write_bw = msg/s, darpc = RPC/s" : ""), LEFT, 48);
            // grid and y axis labels, one line per decade
            FontMetrics metrics = g.getFontMetrics();
            for (int d = lowDecade; d <= highDecade; d++) {
                int y = yOf(Math.pow(10, d), lowDecade, highDecade, plotHeight);
                g.setColor(new Color(0xDDDDDD));
                g.drawLine(LEFT, y, LEFT + plotWidth, y);
                g.setColor(Color.DARK_GRAY);
                String label = decade(d);
                g.drawString(label, LEFT - 8 - metrics.stringWidth(label), y + 4);
            }
            g.setColor(Color.BLACK);
            g.setStroke(new BasicStroke(1.2f));
            g.drawLine(LEFT, TOP, LEFT, TOP + plotHeight);
            g.drawLine(LEFT, TOP + plotHeight, LEFT + plotWidth, TOP + plotHeight);
            int groupWidth = plotWidth / Math.max(1, sizes.size());
            int barWidth = Math.max(8, (int) (groupWidth * 0.8 / Math.max(1, columns.size())));
            for (int s = 0; s < sizes.size(); s++) {
                int size = sizes.get(s);
                int groupLeft = LEFT + s * groupWidth + (groupWidth - barWidth * columns.size()) / 2;
                for (int c = 0; c < columns.size(); c++) {
                    double v = report.medianCallsPerSecond(columns.get(c), size);
                    if (!(v > 0)) {
                        continue;
                    }
                    int x = groupLeft + c * barWidth;
                    int y = yOf(v, lowDecade, highDecade, plotHeight);
                    g.setColor(PALETTE[c % PALETTE.length]);
                    g.fillRect(x + 2, y, barWidth - 4, TOP + plotHeight - y);
                    g.setColor(Color.BLACK);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                    String label = humanCount(v);
                    FontMetrics m = g.getFontMetrics();
                    g.drawString(label, x + (barWidth - m.stringWidth(label)) / 2, y - 4);
                }
                g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
                String label = size + " B payload";
                FontMetrics m = g.getFontMetrics();
                g.drawString(label, LEFT + s * groupWidth + (groupWidth - m.stringWidth(label)) / 2,
                        TOP + plotHeight + 22);
            }
            // legend
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
            int x = LEFT;
            int y = HEIGHT - 24;
            for (int c = 0; c < columns.size(); c++) {
                g.setColor(PALETTE[c % PALETTE.length]);
                g.fillRect(x, y - 11, 14, 14);
                g.setColor(Color.BLACK);
                g.drawString(columns.get(c), x + 20, y);
                x += 40 + g.getFontMetrics().stringWidth(columns.get(c));
            }
        } finally {
            g.dispose();
        }
        if (!ImageIO.write(image, "png", png.toFile())) {
            throw new IOException("no PNG writer in this JDK for " + png);
        }
    }

    private static int yOf(double value, int lowDecade, int highDecade, int plotHeight) {
        double fraction = (Math.log10(value) - lowDecade) / (highDecade - lowDecade);
        return TOP + plotHeight - (int) Math.round(fraction * plotHeight);
    }

    /** Axis label of 10^d: 1, 10, 100, 1k, ... */
    static String decade(int d) {
        String[] units = {"", "k", "M", "G"};
        int unit = Math.min(Math.max(d, 0) / 3, units.length - 1);
        return (long) Math.pow(10, d - 3 * unit) + units[unit];
    }

    static String humanCount(double value) {
        if (value >= 1e9) {
            return String.format(Locale.ROOT, "%.3gG", value / 1e9);
        }
        if (value >= 1e6) {
            return String.format(Locale.ROOT, "%.3gM", value / 1e6);
        }
        if (value >= 1e3) {
            return String.format(Locale.ROOT, "%.3gk", value / 1e3);
        }
        return String.format(Locale.ROOT, "%.3g", value);
    }
}
