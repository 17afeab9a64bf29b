// A C++ bot that does not compile: its author must see the compiler's own message (on the
// bot's page, in `arena check`), not only "the build failed".
#include "kozyri_bot.hpp"

struct Broken : kozyri::Bot {
    std::size_t choose(const kozyri::Request& request) override {
        return request.legal_actions.size() + undeclared_helper(request);
    }
};

int main() {
    Broken bot;
    return kozyri::run(bot);
}
