package kozyri;

/** A message from the referee the kit cannot use (malformed JSON, a missing or mistyped key). */
public class KitException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public KitException(String message) {
        super(message);
    }
}
