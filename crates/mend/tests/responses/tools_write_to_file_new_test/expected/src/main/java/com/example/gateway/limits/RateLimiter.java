package com.example.gateway.limits;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A token bucket per client key. Buckets refill continuously at {@code ratePerSecond}
 * up to {@code burst} tokens.
 */
public final class RateLimiter {

    private static final Duration IDLE_EVICTION = Duration.ofMinutes(10);

    private final double ratePerSecond;
    private final int burst;
    private final Clock clock;
    private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

    public RateLimiter(double ratePerSecond, int burst) {
        this(ratePerSecond, burst, Clock.systemUTC());
    }

    RateLimiter(double ratePerSecond, int burst, Clock clock) {
        if (ratePerSecond <= 0) {
            throw new IllegalArgumentException("ratePerSecond must be positive");
        }
        if (burst < 1) {
            throw new IllegalArgumentException("burst must be at least 1");
        }
        this.ratePerSecond = ratePerSecond;
        this.burst = burst;
        this.clock = Objects.requireNonNull(clock);
    }

    /** Takes one token for {@code key}; returns false when the client must wait. */
    public boolean tryAcquire(String key) {
        return tryAcquire(key, 1);
    }

    public boolean tryAcquire(String key, int permits) {
        if (permits > burst) {
            return false;
        }
        long now = clock.millis();
        Bucket bucket = buckets.computeIfAbsent(key, k -> new Bucket(burst, now));
        synchronized (bucket) {
            bucket.refill(now, ratePerSecond, burst);
            if (bucket.tokens >= permits) {
                bucket.tokens -= permits;
                return true;
            }
            return false;
        }
    }

    /** Milliseconds until {@code key} could take one token. */
    public long retryAfterMillis(String key) {
        Bucket bucket = buckets.get(key);
        if (bucket == null) {
            return 0;
        }
        synchronized (bucket) {
            double missing = 1 - bucket.tokens;
            if (missing <= 0) {
                return 0;
            }
            return (long) Math.ceil(missing / ratePerSecond * 1000);
        }
    }

    /** Drops buckets that have been idle long enough to be full again. */
    public int evictIdle() {
        long cutoff = clock.millis() - IDLE_EVICTION.toMillis();
        int before = buckets.size();
        buckets.entrySet().removeIf(e -> e.getValue().lastRefill < cutoff);
        return before - buckets.size();
    }

    private static final class Bucket {
        double tokens;
        long lastRefill;

        Bucket(int tokens, long now) {
            this.tokens = tokens;
            this.lastRefill = now;
        }

        void refill(long now, double ratePerSecond, int burst) {
            long elapsed = now - lastRefill;
            if (elapsed <= 0) {
                return;
            }
            tokens = Math.min(burst, tokens + elapsed * ratePerSecond / 1000.0);
            lastRefill = now;
        }
    }
}
