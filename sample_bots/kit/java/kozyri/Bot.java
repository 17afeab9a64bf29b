package kozyri;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Starter kit for Kozyri Arena bots in Java (the JDK alone, no libraries).
 *
 * <p>Extend {@code Bot}, implement {@link #choose} and call {@link #run}. The kit speaks
 * protocol v1: it answers hello with ready, turns every request into a call to {@code choose}
 * and sends the answer, and returns on shutdown. It asks for observations as deltas and
 * rebuilds each whole observation from them, exactly as the referee would send it; set
 * {@code observations = "full"} in your constructor to be sent each one whole. stdout belongs
 * to the protocol: the kit keeps it for itself and points {@code System.out} at stderr, so a
 * stray {@code println} is a log line, never invalid output. Log with {@link #log}. On the
 * platform your bot is frozen between its turns: think inside {@code choose}.
 *
 * <pre>
 * public class First extends kozyri.Bot {
 *     public int choose(kozyri.Observation observation, java.util.List&lt;kozyri.Action&gt; legal) {
 *         return 0;  // an index into legal
 *     }
 *     public static void main(String[] args) { new First().run(); }
 * }
 * </pre>
 */
public abstract class Bot {
    public static final int PROTOCOL_VERSION = 1;

    /** Sent in ready; shown next to the manifest name (null: none). */
    protected String name = null;
    /** "delta" (the kit rebuilds each observation) or "full". */
    protected String observations = "delta";
    /** Set in {@code choose} to store a note with the move (up to 1,024 characters). */
    protected String debug = null;
    /** The hello message: game, players, seat, params, variant, time. */
    protected Map<String, Object> hello = new LinkedHashMap<>();
    protected String game = "";
    protected int players = 0;
    protected int seat = 0;

    /** Your seat, 0-based (from hello). */
    public final int seat() {
        return seat;
    }
    /** Of the request being answered: the time bank left and this move's free allowance. */
    protected long timeLeftMs = 0;
    protected long moveMs = 0;

    private Map<String, Object> kept = new LinkedHashMap<>();
    private boolean finished = false;

    /** Return an index into {@code legalActions} (never empty). */
    public abstract int choose(Observation observation, List<Action> legalActions);

    /** The match starts: {@link #game}, {@link #players}, {@link #seat} and {@link #hello} are set. */
    public void onHello(Map<String, Object> hello) {}

    /** The referee rejected an answer (timeout, illegal...) and played the default action. */
    public void onError(Map<String, Object> message) {
        log("referee:", message.get("status"), message.get("message"));
    }

    /** A deal is over; {@code observation} is your view right after it. */
    public void onDealEnd(Observation observation, Map<String, Object> message) {}

    /** The match is over; {@code message.get("place")} is your place (1 is best). */
    public void onMatchEnd(Map<String, Object> message) {}

    /** Write one line to stderr (the referee keeps it with the match log and the replay). */
    public static void log(Object... parts) {
        StringBuilder line = new StringBuilder();
        for (Object part : parts) {
            if (line.length() > 0) {
                line.append(' ');
            }
            line.append(part);
        }
        System.err.println(line);
        System.err.flush();
    }

    /** True once shutdown has been read. */
    public final boolean finished() {
        return finished;
    }

    /**
     * React to one line from the referee: the answer line to send, or null when there is none.
     * Throws {@link KitException} (or {@link Json.JsonException}) for a malformed message.
     */
    public final String handle(String line) {
        Object parsed = Json.parse(line);
        if (!(parsed instanceof Map)) {
            throw new KitException("a message must be a JSON object, got " + line);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> message = (Map<String, Object>) parsed;
        switch (Observation.text(message, "type")) {
            case "hello":
                return ready(message);
            case "request":
                return answer(message);
            case "error":
                onError(message);
                return null;
            case "deal_end":
                onDealEnd(observationOf(message), message);
                return null;
            case "match_end":
                onMatchEnd(message);
                return null;
            case "shutdown":
                finished = true;
                return null;
            default:
                return null; // later versions may add messages: ignore them
        }
    }

    private String ready(Map<String, Object> message) {
        hello = message;
        game = Observation.text(message, "game");
        players = (int) Observation.number(message, "players");
        seat = (int) Observation.number(message, "seat");
        onHello(message);
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("type", "ready");
        ready.put("protocol", (long) PROTOCOL_VERSION);
        if (name != null) {
            ready.put("name", name);
        }
        if (!"full".equals(observations)) {
            ready.put("observations", observations);
        }
        return Json.write(ready);
    }

    @SuppressWarnings("unchecked")
    private String answer(Map<String, Object> request) {
        debug = null;
        Observation observation = observationOf(request);
        List<Action> legal = new ArrayList<>();
        for (Object action : Observation.list(request, "legal_actions")) {
            if (!(action instanceof Map)) {
                throw new KitException("a legal action must be an object, got " + Json.write(action));
            }
            legal.add(new Action((Map<String, Object>) action));
        }
        timeLeftMs = request.get("time_left_ms") instanceof Long ? (Long) request.get("time_left_ms") : 0;
        moveMs = request.get("move_ms") instanceof Long ? (Long) request.get("move_ms") : 0;
        int index = choose(observation, legal);
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("type", "action");
        reply.put("id", request.get("id"));
        reply.put("index", (long) index);
        if (debug != null && !debug.isEmpty()) {
            reply.put("debug", debug);
        }
        return Json.write(reply);
    }

    /** The whole observation a request or deal_end carries (whole or as a delta), as a copy. */
    @SuppressWarnings("unchecked")
    private Observation observationOf(Map<String, Object> message) {
        if (message.containsKey("delta")) {
            applyDelta(kept, Observation.map(message, "delta"));
        } else {
            kept = Observation.map(message, "observation");
        }
        return new Observation((Map<String, Object>) Json.copy(kept));
    }

    /**
     * Bring {@code observation} (the last one received, or empty) up to date with {@code delta},
     * in place: keys in "drop" go, keys in "set" take their new value, lists in "append" grow.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> applyDelta(Map<String, Object> observation, Map<String, Object> delta) {
        if (delta.containsKey("drop")) {
            for (Object key : Observation.list(delta, "drop")) {
                observation.remove(String.valueOf(key));
            }
        }
        if (delta.containsKey("set")) {
            observation.putAll(Observation.map(delta, "set"));
        }
        if (delta.containsKey("append")) {
            for (Map.Entry<String, Object> entry : Observation.map(delta, "append").entrySet()) {
                Object items = entry.getValue();
                if (!(observation.get(entry.getKey()) instanceof List) || !(items instanceof List)) {
                    throw new KitException("the delta appends to '" + entry.getKey() + "', which is not a list");
                }
                ((List<Object>) observation.get(entry.getKey())).addAll((List<Object>) items);
            }
        }
        return observation;
    }

    /**
     * The protocol loop: one message per stdin line until shutdown or the end of input. A
     * malformed message ends the bot with status 2 and the reason on stderr.
     */
    public final void run() {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            String line;
            while (!finished && (line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String answer;
                try {
                    answer = handle(line);
                } catch (KitException | Json.JsonException error) {
                    log("kozyri kit: cannot read the referee's message:", error.getMessage());
                    System.exit(2);
                    return;
                }
                if (answer != null) {
                    protocol.print(answer + "\n");
                    protocol.flush();
                }
            }
        } catch (IOException error) {
            log("kozyri kit: stdin failed:", error.getMessage());
        }
    }
}
