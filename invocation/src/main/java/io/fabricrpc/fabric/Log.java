package io.fabricrpc.fabric;

import java.util.function.Supplier;

/**
 * The control plane's log, through {@link System.Logger}: a bare application sees its warnings on stderr
 * (java.util.logging), and {@code slf4j-jdk-platform-logging} routes it to SLF4J. Messages use SLF4J-style
 * {@code {}} placeholders; a trailing Throwable beyond them is logged as the cause.
 */
final class Log {
    private final System.Logger logger;

    private Log(System.Logger logger) {
        this.logger = logger;
    }

    static Log of(Class<?> type) {
        return new Log(System.getLogger(type.getName()));
    }

    /** Makes the backend load what a first warning needs (handler, formatter), printing nothing. */
    void warmUp() {
        if (logger.isLoggable(System.Logger.Level.WARNING)) {
            java.util.logging.Logger backend = java.util.logging.Logger.getLogger(logger.getName());
            java.util.logging.LogRecord record = new java.util.logging.LogRecord(java.util.logging.Level.WARNING, "");
            for (java.util.logging.Logger l = backend; l != null; l = l.getUseParentHandlers() ? l.getParent() : null) {
                for (java.util.logging.Handler handler : l.getHandlers()) {
                    java.util.logging.Formatter formatter = handler.getFormatter();
                    if (formatter != null) {
                        formatter.format(record); // formatted, not published
                    }
                }
            }
        }
    }

    void debug(String format, Object... args) {
        log(System.Logger.Level.DEBUG, format, args);
    }

    void info(String format, Object... args) {
        log(System.Logger.Level.INFO, format, args);
    }

    void warn(String format, Object... args) {
        log(System.Logger.Level.WARNING, format, args);
    }

    void error(String format, Object... args) {
        log(System.Logger.Level.ERROR, format, args);
    }

    private void log(System.Logger.Level level, String format, Object[] args) {
        if (!logger.isLoggable(level)) {
            return;
        }
        StringBuilder out = new StringBuilder(format.length() + 32);
        int used = 0;
        int from = 0;
        for (int at; (at = format.indexOf("{}", from)) >= 0 && used < args.length; from = at + 2) {
            out.append(format, from, at).append(args[used++]);
        }
        out.append(format, from, format.length());
        Supplier<String> message = out::toString;
        if (used < args.length && args[args.length - 1] instanceof Throwable cause) {
            logger.log(level, message, cause);
        } else {
            logger.log(level, message);
        }
    }
}
