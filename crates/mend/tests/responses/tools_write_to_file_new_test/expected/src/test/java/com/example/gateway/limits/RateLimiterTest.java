package com.example.gateway.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class RateLimiterTest {

    private final Clock clock = Clock.fixed(Instant.parse("2024-05-01T12:00:00Z"), ZoneOffset.UTC);

    @Test
    void burstIsAvailableImmediately() {
        RateLimiter limiter = new RateLimiter(1.0, 3, clock);
        assertTrue(limiter.tryAcquire("a"));
        assertTrue(limiter.tryAcquire("a"));
        assertTrue(limiter.tryAcquire("a"));
        assertFalse(limiter.tryAcquire("a"));
    }

    @Test
    void retryAfterIsOneTokenAway() {
        RateLimiter limiter = new RateLimiter(2.0, 1, clock);
        assertTrue(limiter.tryAcquire("b"));
        assertEquals(500, limiter.retryAfterMillis("b"));
    }
}
