package kozyri;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer (the JDK has none).
 *
 * <p>Objects become {@code LinkedHashMap<String, Object>} (keys in the order read), arrays
 * {@code ArrayList<Object>}, strings {@code String}, whole numbers {@code Long}, other numbers
 * {@code Double}, {@code true}/{@code false} {@code Boolean} and {@code null} Java's null.
 * Malformed text raises {@link JsonException}, saying what was expected and where.
 */
public final class Json {
    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Thrown for malformed JSON; the message names the character offset. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public JsonException(String message) {
            super(message);
        }
    }

    /** The value of one whole JSON text (surrounding blanks allowed, nothing else). */
    public static Object parse(String text) {
        Json reader = new Json(text);
        reader.blanks();
        Object value = reader.value(0);
        reader.blanks();
        if (reader.pos != text.length()) {
            throw reader.error("end of the text");
        }
        return value;
    }

    private static final int MAX_DEPTH = 512;

    private JsonException error(String expected) {
        String found = pos < text.length() ? "'" + text.charAt(pos) + "'" : "the end";
        return new JsonException("malformed JSON: expected " + expected + " at character " + pos + ", found " + found);
    }

    private void blanks() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw new JsonException("malformed JSON: nested more than " + MAX_DEPTH + " deep");
        }
        if (pos >= text.length()) {
            throw error("a value");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return word("true", Boolean.TRUE);
            case 'f':
                return word("false", Boolean.FALSE);
            case 'n':
                return word("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw error("a value");
        }
    }

    private Object word(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error(word);
        }
        pos += word.length();
        return value;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        pos++;
        blanks();
        if (pos < text.length() && text.charAt(pos) == '}') {
            pos++;
            return out;
        }
        while (true) {
            blanks();
            if (pos >= text.length() || text.charAt(pos) != '"') {
                throw error("a key in quotes");
            }
            String key = string();
            blanks();
            expect(':');
            blanks();
            out.put(key, value(depth + 1));
            blanks();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect('}');
            return out;
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        pos++;
        blanks();
        if (pos < text.length() && text.charAt(pos) == ']') {
            pos++;
            return out;
        }
        while (true) {
            blanks();
            out.add(value(depth + 1));
            blanks();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
                continue;
            }
            expect(']');
            return out;
        }
    }

    private void expect(char c) {
        if (pos >= text.length() || text.charAt(pos) != c) {
            throw error("'" + c + "'");
        }
        pos++;
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= text.length()) {
                throw error("the closing quote");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                pos--;
                throw error("no control character inside a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("an escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': out.append(hex4()); break;
                default:
                    pos--;
                    throw error("an escape (one of \"\\/bfnrtu)");
            }
        }
    }

    private char hex4() {
        if (pos + 4 > text.length()) {
            throw error("four hex digits");
        }
        int code = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(pos), 16);
            if (digit < 0) {
                throw error("a hex digit");
            }
            code = code * 16 + digit;
            pos++;
        }
        return (char) code;
    }

    private Object number() {
        int start = pos;
        if (text.charAt(pos) == '-') {
            pos++;
        }
        if (pos < text.length() && text.charAt(pos) == '0') {
            pos++;
        } else if (!digits()) {
            throw error("a digit");
        }
        boolean whole = true;
        if (pos < text.length() && text.charAt(pos) == '.') {
            pos++;
            whole = false;
            if (!digits()) {
                throw error("a digit after the point");
            }
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            pos++;
            whole = false;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            if (!digits()) {
                throw error("a digit in the exponent");
            }
        }
        String number = text.substring(start, pos);
        if (whole) {
            try {
                return Long.parseLong(number);
            } catch (NumberFormatException tooLong) {
                return Double.parseDouble(number);
            }
        }
        return Double.parseDouble(number);
    }

    private boolean digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > start;
    }

    /** Compact JSON for {@code value} (one line: every control character escaped). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote(out, (String) value);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(out, String.valueOf(entry.getKey()));
                out.append(':');
                write(out, entry.getValue());
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(out, item);
            }
            out.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new JsonException("cannot write " + d + " as JSON");
            }
            out.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? String.format(java.util.Locale.ROOT, "%.1f", d) : Double.toString(d));
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else {
            quote(out, value.toString());
        }
    }

    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c < 0x20 || c > 0x7e) {
                out.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    /** A deep copy of a parsed value (maps and lists copied, the rest shared: immutable). */
    @SuppressWarnings("unchecked")
    public static Object copy(Object value) {
        if (value instanceof Map) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (Map.Entry<String, Object> entry : ((Map<String, Object>) value).entrySet()) {
                out.put(entry.getKey(), copy(entry.getValue()));
            }
            return out;
        }
        if (value instanceof List) {
            List<Object> out = new ArrayList<>();
            for (Object item : (List<Object>) value) {
                out.add(copy(item));
            }
            return out;
        }
        return value;
    }
}
