// Any game, random: plays every game of the platform from the legal actions alone.
//
// The choice is random but reproducible: the generator is seeded from the game and the seat
// (the same generator as the JavaScript sample's), so the same match plays out the same way
// again, which makes a replay from the server easy to repeat with `arena match --repeat`.

#[allow(dead_code)]
mod kozyri {
    include!(concat!(env!("KOZYRI_KIT"), "/rust/kozyri.rs"));
}

use kozyri::{Bot, Hello, Request};

struct AnyGameRandom {
    state: u32,
}

impl Bot for AnyGameRandom {
    fn name(&self) -> Option<String> {
        Some("any-game-random-rust".into())
    }

    fn on_hello(&mut self, hello: &Hello) {
        self.state = hash(&format!("{}/{}/{}", hello.game, hello.players, hello.seat));
        kozyri::log(&format!("playing {} in seat {} of {}", hello.game, hello.seat, hello.players));
    }

    fn choose(&mut self, request: &mut Request) -> usize {
        let index = (self.random() * request.legal.len() as f64) as usize;
        request.debug = Some(format!("{} of {}", index + 1, request.legal.len()));
        index
    }
}

/// FNV-1a over the characters of `text`.
fn hash(text: &str) -> u32 {
    text.chars().fold(2166136261u32, |h, c| (h ^ c as u32).wrapping_mul(16777619))
}

impl AnyGameRandom {
    /// mulberry32: a small seeded generator, uniform in [0, 1).
    fn random(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x6d2b79f5);
        let s = self.state;
        let mut t = (s ^ (s >> 15)).wrapping_mul(1 | s);
        t = t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t)) ^ t;
        (t ^ (t >> 14)) as f64 / 4294967296.0
    }
}

fn main() {
    kozyri::run(&mut AnyGameRandom { state: 0 });
}
