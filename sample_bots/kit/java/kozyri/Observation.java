package kozyri;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Everything your seat may know, as the referee would send it whole: typed getters for the
 * keys common to every game and {@link #raw} for the rest (each rulebook in seeds/ lists them).
 * It is your own copy: change it freely.
 */
public final class Observation {
    /** The whole observation, keys in the referee's order. */
    public final Map<String, Object> raw;

    public Observation(Map<String, Object> raw) {
        this.raw = raw;
    }

    public String game() {
        return text(raw, "game");
    }

    public int seat() {
        return (int) number(raw, "seat");
    }

    /** Your cards, e.g. ["8S", "QS"]. */
    public List<String> hand() {
        return texts(raw, "hand");
    }

    /** How many cards each seat holds. */
    public List<Long> handCounts() {
        List<Long> out = new ArrayList<>();
        for (Object count : list(raw, "hand_counts")) {
            out.add(((Number) count).longValue());
        }
        return out;
    }

    /** The public events of the deal, each an object with a "type". */
    @SuppressWarnings("unchecked")
    public List<Map<String, Object>> history() {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object event : list(raw, "history")) {
            out.add((Map<String, Object>) event);
        }
        return out;
    }

    /** Any key, as parsed (see {@link Json}); null when absent. */
    public Object get(String key) {
        return raw.get(key);
    }

    @Override
    public String toString() {
        return Json.write(raw);
    }

    static String text(Map<String, Object> object, String key) {
        Object value = object.get(key);
        if (!(value instanceof String)) {
            throw new KitException("expected a string at '" + key + "', got " + Json.write(value));
        }
        return (String) value;
    }

    static long number(Map<String, Object> object, String key) {
        Object value = object.get(key);
        if (!(value instanceof Long)) {
            throw new KitException("expected a whole number at '" + key + "', got " + Json.write(value));
        }
        return (Long) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Map<String, Object> object, String key) {
        Object value = object.get(key);
        if (!(value instanceof List)) {
            throw new KitException("expected a list at '" + key + "', got " + Json.write(value));
        }
        return (List<Object>) value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Map<String, Object> object, String key) {
        Object value = object.get(key);
        if (!(value instanceof Map)) {
            throw new KitException("expected an object at '" + key + "', got " + Json.write(value));
        }
        return (Map<String, Object>) value;
    }

    static List<String> texts(Map<String, Object> object, String key) {
        List<String> out = new ArrayList<>();
        for (Object item : list(object, key)) {
            out.add((String) item);
        }
        return out;
    }
}
