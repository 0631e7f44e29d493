package io.fabricrpc.messaging;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A failure text too long for its slot keeps its start (the class) and its end (the reason). */
class ChannelNoticesTest {

    @Test
    void aShortTextIsKeptWhole() {
        String text = "java.lang.IllegalStateException\nthe remote lambda fails";
        assertEquals(text, ChannelNotices.fit(text, 255));
    }

    @Test
    void aLongTextKeepsItsStartAndItsEnd() {
        String text = "java.lang.IllegalStateException\n" + "x".repeat(400) + " the reason";
        String fitted = ChannelNotices.fit(text, 255);
        assertTrue(fitted.getBytes(StandardCharsets.UTF_8).length <= 255, fitted);
        assertTrue(fitted.startsWith("java.lang.IllegalStateException\n"), fitted);
        assertTrue(fitted.endsWith(" the reason"), fitted);
        assertTrue(fitted.contains("..."), fitted);
    }

    @Test
    void multiByteCharactersAreNotSplit() {
        String text = "\uD83D\uDE00".repeat(200); // 4 UTF-8 bytes each, surrogate pairs in Java
        String fitted = ChannelNotices.fit(text, 255);
        assertTrue(fitted.getBytes(StandardCharsets.UTF_8).length <= 255, fitted);
        assertFalse(fitted.contains("?"), fitted);
        assertEquals(fitted, new String(fitted.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    }
}
