// Any game, random, in C++: a uniformly random legal action in every game of the platform.
//
// The generator is seeded from the game and the seat, so the same match (same seed, same
// bots) plays out the same way again. The kit (kozyri_bot.hpp) does the protocol.
#include <cstdint>
#include <random>
#include <string>

#include "kozyri_bot.hpp"

class AnyGameRandom : public kozyri::Bot {
   public:
    AnyGameRandom() { name = "any-game-random-cpp"; }

    void on_hello(const kozyri::Hello& hello) override {
        std::string key = hello.game + "/" + std::to_string(hello.players) + "/" + std::to_string(hello.seat);
        std::uint64_t seed = 1469598103934665603ULL;  // FNV-1a of the key
        for (unsigned char c : key) seed = (seed ^ c) * 1099511628211ULL;
        random_.seed(seed);
        kozyri::log("playing ", hello.game, " in seat ", hello.seat, " of ", hello.players);
    }

    std::size_t choose(const kozyri::Request& request) override {
        std::size_t count = request.legal_actions.size();
        std::size_t index = static_cast<std::size_t>(random_() % count);
        debug = std::to_string(index + 1) + " of " + std::to_string(count);
        return index;
    }

   private:
    std::mt19937_64 random_;
};

int main() {
    AnyGameRandom bot;
    return kozyri::run(bot);
}
