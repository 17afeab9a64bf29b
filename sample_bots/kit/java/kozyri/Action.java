package kozyri;

import java.util.Map;

/** One legal action, as the referee sent it: its {@code type}, its {@code card} if it has one. */
public final class Action {
    public final String type;
    /** The card it plays ("8H"), or null for actions without one (pick_up, take...). */
    public final String card;
    /** The whole wire object, every key as sent. */
    public final Map<String, Object> raw;

    public Action(Map<String, Object> raw) {
        this.raw = raw;
        this.type = Observation.text(raw, "type");
        Object card = raw.get("card");
        this.card = card instanceof String ? (String) card : null;
    }

    @Override
    public String toString() {
        return Json.write(raw);
    }
}
