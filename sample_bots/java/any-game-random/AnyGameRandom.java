// Any game, random: plays every game of the platform from legal_actions alone.
//
// The choice is random but reproducible: the generator is seeded from the game and the seat
// (the same generator as the JavaScript sample's), so the same match plays out the same way
// again, which makes a replay from the server easy to repeat with `arena match --repeat`.

import java.util.List;
import java.util.Map;
import kozyri.Action;
import kozyri.Bot;
import kozyri.Observation;

public class AnyGameRandom extends Bot {
    private int state = 0;

    public AnyGameRandom() {
        name = "any-game-random-java";
    }

    @Override
    public void onHello(Map<String, Object> hello) {
        state = hash(game + "/" + players + "/" + seat);
        log("playing", game, "in seat", seat, "of", players);
    }

    @Override
    public int choose(Observation observation, List<Action> legalActions) {
        int index = (int) (random() * legalActions.size());
        debug = (index + 1) + " of " + legalActions.size();
        return index;
    }

    /** FNV-1a over the UTF-16 units of text. */
    static int hash(String text) {
        int h = 0x811c9dc5;
        for (int i = 0; i < text.length(); i++) {
            h = (h ^ text.charAt(i)) * 16777619;
        }
        return h;
    }

    /** mulberry32: a small seeded generator, uniform in [0, 1). */
    double random() {
        state += 0x6d2b79f5;
        int t = (state ^ (state >>> 15)) * (1 | state);
        t = (t + (t ^ (t >>> 7)) * (61 | t)) ^ t;
        return ((t ^ (t >>> 14)) & 0xffffffffL) / 4294967296.0;
    }

    public static void main(String[] args) {
        new AnyGameRandom().run();
    }
}
