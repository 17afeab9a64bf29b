// Unit tests of the Java kit: a plain main, no test library. Run from sample_bots/kit/java:
//   javac -d /tmp/kit-test -sourcepath . tests/KitTest.java && java -cp /tmp/kit-test KitTest
// Prints one line per test and exits with status 1 if any failed.

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import kozyri.Action;
import kozyri.Bot;
import kozyri.Json;
import kozyri.KitException;
import kozyri.Observation;

public class KitTest {
    /** Records what choose() saw; plays the last legal action. */
    static final class Recorder extends Bot {
        final List<String> seen = new ArrayList<>();
        final List<String> actions = new ArrayList<>();

        Recorder() {
            name = "recorder";
        }

        @Override
        public int choose(Observation observation, List<Action> legal) {
            seen.add(observation.toString());
            actions.add(legal.get(legal.size() - 1).type);
            debug = "hand " + observation.hand().size();
            observation.hand().clear();
            observation.raw.put("scribble", 1L);
            return legal.size() - 1;
        }
    }

    static final String HELLO = "{\"type\":\"hello\",\"protocol\":1,\"game\":\"svoi-kozyri\",\"players\":2,"
            + "\"seat\":1,\"params\":{\"deals\":1},\"variant\":null,\"time\":{\"init_ms\":10000},\"name\":\"x\"}";
    static final String FULL = "{\"type\":\"request\",\"id\":3,\"deal\":0,\"observation\":{\"game\":\"svoi-kozyri\","
            + "\"seat\":1,\"hand\":[\"8S\",\"QS\"],\"pile\":[\"9C\"],\"hand_counts\":[9,2],\"gone\":true,"
            + "\"history\":[{\"type\":\"lead\",\"seat\":0,\"card\":\"9C\"}]},"
            + "\"legal_actions\":[{\"type\":\"beat\",\"card\":\"QS\"},{\"type\":\"pick_up\"}],\"time_left_ms\":29500,\"move_ms\":1000}";
    static final String DELTA = "{\"type\":\"request\",\"id\":4,\"deal\":0,\"delta\":{\"set\":{\"hand\":[\"8S\"],"
            + "\"hand_counts\":[8,1],\"mode\":\"respond\"},\"append\":{\"pile\":[\"QS\",\"TH\"],"
            + "\"history\":[{\"type\":\"beat\",\"seat\":1,\"card\":\"QS\"}]},\"drop\":[\"gone\"]},"
            + "\"legal_actions\":[{\"type\":\"second\",\"card\":\"8S\"}],\"time_left_ms\":29000,\"move_ms\":1000}";
    static final String REBUILT = "{\"game\":\"svoi-kozyri\",\"seat\":1,\"hand\":[\"8S\"],\"pile\":[\"9C\",\"QS\",\"TH\"],"
            + "\"hand_counts\":[8,1],\"history\":[{\"type\":\"lead\",\"seat\":0,\"card\":\"9C\"},"
            + "{\"type\":\"beat\",\"seat\":1,\"card\":\"QS\"}],\"mode\":\"respond\"}";

    static int failures = 0;

    static void check(String test, boolean ok, String detail) {
        System.out.println((ok ? "ok   " : "FAIL ") + test + (ok ? "" : ": " + detail));
        if (!ok) {
            failures++;
        }
    }

    static void equal(String test, Object got, Object want) {
        check(test, String.valueOf(got).equals(String.valueOf(want)), "got " + got + ", want " + want);
    }

    static String errorOf(Runnable action) {
        try {
            action.run();
        } catch (KitException | Json.JsonException error) {
            return error.getMessage();
        }
        return "no error";
    }

    public static void main(String[] args) {
        Recorder bot = new Recorder();
        equal("hello is answered with ready, asking for deltas", bot.handle(HELLO),
                "{\"type\":\"ready\",\"protocol\":1,\"name\":\"recorder\",\"observations\":\"delta\"}");
        equal("the seat comes from hello", bot.seat(), 1);
        equal("a request is answered by index with its id", bot.handle(FULL),
                "{\"type\":\"action\",\"id\":3,\"index\":1,\"debug\":\"hand 2\"}");
        equal("legal actions are typed", bot.actions.get(0), "pick_up");
        equal("a delta rebuilds the whole observation, exactly", bot.handle(DELTA),
                "{\"type\":\"action\",\"id\":4,\"index\":0,\"debug\":\"hand 1\"}");
        equal("... key for key and value for value", bot.seen.get(1), REBUILT);
        bot.handle("{\"type\":\"deal_end\",\"deal\":0,\"delta\":{\"set\":{\"deal\":1}}}");
        equal("unknown messages are ignored", bot.handle("{\"type\":\"news\",\"x\":[1,2.5,-3e2,null,false]}"), null);
        bot.handle("{\"type\":\"shutdown\"}");
        check("shutdown ends the loop", bot.finished(), "not finished");

        String broken = errorOf(() -> new Recorder().handle("{\"type\":\"hello\",\"seat\":"));
        check("malformed JSON names the place", broken.startsWith("malformed JSON: expected a value at character 23, found the end"), broken);
        String trailing = errorOf(() -> Json.parse("{} x"));
        check("trailing text is refused", trailing.contains("expected end of the text at character 3"), trailing);
        String untyped = errorOf(() -> new Recorder().handle("{\"id\":1}"));
        check("a message without a type is refused clearly", untyped.contains("expected a string at 'type'"), untyped);
        String notObject = errorOf(() -> new Recorder().handle("[1]"));
        check("a message must be an object", notObject.contains("must be a JSON object"), notObject);
        Recorder lost = new Recorder();
        lost.handle(HELLO);
        String bad = errorOf(() -> lost.handle(DELTA));
        check("a delta appending to a missing list is refused", bad.contains("appends to"), bad);

        Object parsed = Json.parse("{\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83c\\udca1\",\"n\":[0,-12,3.25,1e3,12345678901234]}");
        equal("strings and numbers round-trip", Json.write(parsed),
                "{\"s\":\"a\\\"b\\\\c\\n\\u00e9\\ud83c\\udca1\",\"n\":[0,-12,3.25,1000.0,12345678901234]}");
        check("whole numbers are longs", ((List<?>) ((Map<?, ?>) parsed).get("n")).get(4) instanceof Long, "not a long");
        System.out.println(failures == 0 ? "all passed" : failures + " failed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
