package kozyri;

/** Card helpers: "TH" is the ten of hearts; ranks 5..14 (the ace is 14), suits S H D C. */
public final class Cards {
    public static final String RANKS = "56789TJQKA";
    public static final String SUITS = "SHDC";

    private Cards() {}

    public static int rank(String card) {
        return RANKS.indexOf(card.charAt(0)) + 5;
    }

    public static char suit(String card) {
        return card.charAt(1);
    }

    /** Does {@code card} beat {@code top} for a player whose own trump suit is {@code trump}? */
    public static boolean beats(String card, String top, Character trump) {
        if (suit(card) == suit(top)) {
            return rank(card) > rank(top);
        }
        return trump != null && suit(card) == trump;
    }
}
